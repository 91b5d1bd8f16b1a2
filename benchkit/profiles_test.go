package benchkit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Every profile a run names is written, and the runtime's sampling rates
// are put back afterwards.
func TestProfilesWriteEveryFileNamed(t *testing.T) {
	dir := t.TempDir()
	p := Profiles{
		CPU: filepath.Join(dir, "cpu"), Alloc: filepath.Join(dir, "alloc"),
		Block: filepath.Join(dir, "block"), Mutex: filepath.Join(dir, "mutex"),
		Trace: filepath.Join(dir, "trace"),
	}
	rate := runtime.MemProfileRate
	r, err := p.start()
	if err != nil {
		t.Fatal(err)
	}
	var keep [][]byte
	for i := range 1000 {
		keep = append(keep, make([]byte, i))
	}
	_ = keep
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p.CPU, p.Alloc, p.Block, p.Mutex, p.Trace} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	if runtime.MemProfileRate != rate {
		t.Errorf("MemProfileRate is %d after the run, %d before", runtime.MemProfileRate, rate)
	}
	if _, err := (Profiles{CPU: filepath.Join(dir, "no", "such", "folder")}).start(); err == nil {
		t.Error("a CPU profile in a missing folder started")
	}
}
