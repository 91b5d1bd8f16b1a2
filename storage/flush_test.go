package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// crashAndReopen crashes l and checks that the reopened log holds exactly
// the batches below the flushed offset at the crash.
func crashAndReopen(t *testing.T, l *Log, opts Options) *Log {
	t.Helper()
	flushed := l.LastFlushedOffset()
	var want []byte
	for _, b := range readAll(t, l, l.LogStartOffset(), 1<<20) {
		if b.LastOffset() < flushed {
			want = append(want, b.Raw...)
		}
	}
	if err := l.Crash(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(0, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after crash: %v", err)
	}
	l = openLog(t, l.Dir(), opts)
	if l.LogEndOffset() != flushed {
		t.Fatalf("after the crash the log ends at %d, want the flushed offset %d", l.LogEndOffset(), flushed)
	}
	if r := l.Recovery(); r.Truncated() {
		t.Fatalf("a crash at a flush point left a torn tail: %v", r)
	}
	if got := rawOf(readAll(t, l, l.LogStartOffset(), 1<<20)); string(got) != string(want) {
		t.Fatalf("after the crash the log holds %d bytes, want %d", len(got), len(want))
	}
	return l
}

func TestCrashLosesUnflushedTail(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	for _, policy := range []FlushPolicy{FlushAlways, FlushInterval, FlushNever} {
		t.Run(policy.String(), func(t *testing.T) {
			opts := small
			opts.FlushPolicy, opts.FlushInterval, opts.Now = policy, 100*time.Millisecond, clock.Now
			l := openLog(t, t.TempDir(), opts)
			step := func(d time.Duration, epoch int32, n int) {
				clock.now = clock.now.Add(d)
				mustAppend(t, l, epoch, records(fmt.Sprint(l.LogEndOffset()), n, 40))
			}
			var flushed int64
			switch policy {
			case FlushAlways:
				step(0, 1, 3)
				step(0, 2, 2)
				flushed = l.LogEndOffset() // every append is flushed
			case FlushInterval:
				step(10*time.Millisecond, 1, 3) // 10ms after the last fsync (at Open): not yet
				if l.LastFlushedOffset() != 0 {
					t.Fatalf("flushed %d before the interval passed", l.LastFlushedOffset())
				}
				step(90*time.Millisecond, 1, 2) // 100ms: this append fsyncs
				flushed = l.LogEndOffset()
				step(50*time.Millisecond, 2, 4) // 50ms since: unflushed
				step(0, 2, 1)
			case FlushNever:
				step(0, 1, 3)
				if err := l.Flush(); err != nil { // no fsync, but the data counts as flushed
					t.Fatal(err)
				}
				flushed = l.LogEndOffset()
				step(0, 2, 4)
			}
			// Enough unflushed batches to roll segments, with a new epoch.
			for range 30 {
				step(time.Millisecond, 3, 3)
			}
			if policy == FlushAlways {
				flushed = l.LogEndOffset()
			}
			if l.LastFlushedOffset() != flushed {
				t.Fatalf("last flushed offset %d, want %d", l.LastFlushedOffset(), flushed)
			}
			l = crashAndReopen(t, l, opts)
			defer l.Close()
			if policy != FlushAlways && l.LastEpoch() == 3 {
				t.Fatalf("epoch 3 of the lost tail survived the crash: %v", l.Epochs())
			}
			// The log goes on after the crash.
			if base, _ := mustAppend(t, l, 4, records("after", 1, 5)); base != flushed {
				t.Fatalf("append after the crash at %d, want %d", base, flushed)
			}
		})
	}
}

// Flush under FlushInterval fsyncs now and restarts the interval.
func TestFlushIntervalExplicitFlush(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	opts := Options{FlushPolicy: FlushInterval, FlushInterval: time.Second, Now: clock.Now}
	l := openLog(t, t.TempDir(), opts)
	mustAppend(t, l, 1, records("a", 1, 5))
	clock.now = clock.now.Add(900 * time.Millisecond)
	if err := l.Flush(); err != nil || l.LastFlushedOffset() != 1 {
		t.Fatalf("flush: %v, flushed %d", err, l.LastFlushedOffset())
	}
	clock.now = clock.now.Add(200 * time.Millisecond) // 1.1s after Open, 0.2s after the flush
	mustAppend(t, l, 1, records("b", 1, 5))
	if l.LastFlushedOffset() != 1 {
		t.Fatalf("flushed %d only 200ms after a flush", l.LastFlushedOffset())
	}
	l = crashAndReopen(t, l, opts)
	l.Close()
}

// A clean close keeps everything, even under FlushNever with no Flush.
func TestCloseKeepsAll(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	want := fill(t, l, 50)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	checkValues(t, readAll(t, l, 0, 1<<20), want)
}

// A truncation below the flushed offset takes the flushed offset with it.
func TestTruncateLowersFlushed(t *testing.T) {
	l := openLog(t, t.TempDir(), Options{FlushPolicy: FlushAlways})
	mustAppend(t, l, 1, records("a", 5, 5))
	mustAppend(t, l, 1, records("b", 5, 5))
	if err := l.TruncateTo(5); err != nil || l.LastFlushedOffset() != 5 {
		t.Fatalf("truncate: %v, flushed %d", err, l.LastFlushedOffset())
	}
	l = crashAndReopen(t, l, Options{})
	l.Close()
}

// A crash can lose data up to past the log start; the log reopens empty at
// its start.
func TestCrashBelowLogStart(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	fill(t, l, 20)
	start := l.LogEndOffset() - 3
	if err := l.AdvanceLogStart(start); err != nil {
		t.Fatal(err)
	}
	if l.LastFlushedOffset() != 0 {
		t.Fatalf("flushed %d without a flush", l.LastFlushedOffset())
	}
	if err := l.Crash(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, small)
	defer l.Close()
	if l.LogStartOffset() != start || l.LogEndOffset() != start {
		t.Fatalf("offsets %d-%d, want an empty log at %d", l.LogStartOffset(), l.LogEndOffset(), start)
	}
	if base, _ := mustAppend(t, l, 5, records("x", 1, 1)); base != start {
		t.Fatalf("append at %d", base)
	}
}

// Under FlushNever a flush leaves the index file alone; close writes it,
// and a crash leaves it short, which the next open rebuilds.
func TestFlushNeverIndex(t *testing.T) {
	opts := small
	opts.FlushPolicy = FlushNever
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir, opts)
			mustAppend(t, l, 1, records("a", 1, 40))
			for range 8 {
				mustAppend(t, l, 1, records(fmt.Sprint(l.LogEndOffset()), 1, 40))
				if err := l.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			leo := l.LogEndOffset()
			idx := strings.TrimSuffix(segmentFiles(t, dir)[0], logSuffix) + indexSuffix
			if len(l.active().index) == 0 || len(fileBytes(t, idx)) != 0 {
				t.Fatalf("want index entries in memory only: %d entries, file %d bytes", len(l.active().index), len(fileBytes(t, idx)))
			}
			if crash {
				l = crashAndReopen(t, l, opts)
				if r := l.Recovery(); len(r.IndexesRebuilt) != 1 {
					t.Fatalf("report after a crash: %v", r)
				}
			} else {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l = openLog(t, dir, opts)
				if r := l.Recovery(); r.String() != "clean" {
					t.Fatalf("report after close: %v", r)
				}
			}
			defer l.Close()
			if l.LogEndOffset() != leo {
				t.Fatalf("log ends at %d, want %d", l.LogEndOffset(), leo)
			}
			for off := range leo {
				if _, err := l.Read(off, 1); err != nil {
					t.Fatalf("read %d: %v", off, err)
				}
			}
		})
	}
}

// TestFlushWhileAppending flushes on one goroutine while another appends
// (rolling segments and starting epochs), as the quorum's leader does with
// its fsync off its loop: each Flush makes durable at least what was
// appended before it began, the flushed offset never moves back or past
// the end, and a crash keeps exactly the flushed batches, with their index
// and epochs.
func TestFlushWhileAppending(t *testing.T) {
	opts := small
	opts.FlushPolicy, opts.FlushInterval = FlushInterval, 1<<62
	l := openLog(t, t.TempDir(), opts)
	stop := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		last := int64(0)
		for {
			select {
			case <-stop:
				return
			default:
			}
			before := l.LogEndOffset()
			if err := l.Flush(); err != nil {
				errs <- err
				return
			}
			f := l.LastFlushedOffset()
			if f < before || f < last || f > l.LogEndOffset() {
				errs <- fmt.Errorf("flushed offset %d after a flush begun at end %d (previously %d, end now %d)", f, before, last, l.LogEndOffset())
				return
			}
			last = f
		}
	}()
	for i := range 60 {
		mustAppend(t, l, int32(1+i/20), records(fmt.Sprint(i), 1+i%3, 40))
	}
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, 4, records("unflushed", 2, 40))
	crashAndReopen(t, l, opts)
}
