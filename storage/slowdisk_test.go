package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
)

func openScratch(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// writeAsync writes through d on its own goroutine; the channel says when
// the write and the fsync after it are done.
func writeAsync(t *testing.T, d Disk, f *os.File) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := d.WriteAt(f, []byte("x"), 0)
		if err == nil {
			err = d.Sync(f)
		}
		done <- err
	}()
	return done
}

func TestSlowDiskWaitsOnTheClusterClock(t *testing.T) {
	c := clock.New()
	d := NewSlowDisk(nil, c)
	f := openScratch(t)
	if err := d.SetDelay(time.Second); err != nil {
		t.Fatal(err)
	}
	c.Pause()
	defer c.Resume()
	done := writeAsync(t, d, f)
	select {
	case err := <-done:
		t.Fatalf("the write ended (%v) while the paused clock holds it", err)
	case <-time.After(100 * time.Millisecond):
	}
	// The write waits one delay, the fsync another.
	for i := range int64(2) {
		deadline := time.Now().Add(10 * time.Second)
		for d.Waited() <= i {
			if time.Now().After(deadline) {
				t.Fatal("the write never started waiting")
			}
			time.Sleep(time.Millisecond)
		}
		if err := c.Advance(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write did not end after the clock advanced past both delays")
	}
	if got := d.Waited(); got != 2 {
		t.Errorf("waited %d times, want 2 (one write, one fsync)", got)
	}
	if b, err := os.ReadFile(f.Name()); err != nil || string(b) != "x" {
		t.Errorf("file holds %q (%v), want the write", b, err)
	}
}

func TestSlowDiskCutEndsTheWaits(t *testing.T) {
	c := clock.New()
	d := NewSlowDisk(nil, c)
	f := openScratch(t)
	if err := d.SetDelay(MaxDiskDelay); err != nil {
		t.Fatal(err)
	}
	c.Pause() // nothing but Cut can end the wait
	defer c.Resume()
	done := writeAsync(t, d, f)
	deadline := time.Now().Add(10 * time.Second)
	for d.Waited() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the write never started waiting")
		}
		time.Sleep(time.Millisecond)
	}
	d.Cut(true)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Cut did not end the wait of a paused clock")
	}
	// Cut, writes go through without waiting; uncut, they wait again.
	if err := <-writeAsync(t, d, f); err != nil {
		t.Fatal(err)
	}
	d.Cut(false)
	done = writeAsync(t, d, f)
	select {
	case err := <-done:
		t.Fatalf("the write ended (%v) without its delay after the cut ended", err)
	case <-time.After(100 * time.Millisecond):
	}
	d.Cut(true)
	<-done
}

func TestSlowDiskDelay(t *testing.T) {
	d := NewSlowDisk(nil, nil)
	f := openScratch(t)
	if err := d.SetDelay(30 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := <-writeAsync(t, d, f); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 60*time.Millisecond {
		t.Errorf("a write and an fsync took %v, want at least 2 x 30ms", took)
	}
	if err := d.SetDelay(0); err != nil {
		t.Fatal(err)
	}
	waited := d.Waited()
	if err := <-writeAsync(t, d, f); err != nil {
		t.Fatal(err)
	}
	if d.Waited() != waited {
		t.Error("a write waited with the delay back at 0")
	}
	for _, bad := range []time.Duration{-time.Millisecond, MaxDiskDelay + time.Millisecond} {
		err := d.SetDelay(bad)
		if err == nil || !strings.Contains(err.Error(), "must be between 0 and 10s") {
			t.Errorf("SetDelay(%v) = %v, want a range error", bad, err)
		}
	}
	if d.Delay() != 0 {
		t.Errorf("a refused delay changed it to %v", d.Delay())
	}
}
