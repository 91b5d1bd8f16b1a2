package interop

import (
	"os"
	"testing"
	"time"
)

func TestParseProcStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis, as a thread may
	// name itself; utime 250 and stime 50 ticks.
	line := "4242 (java (main) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 30 0 123 0 0\n"
	d, err := parseProcStatCPU([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if d != 3*time.Second {
		t.Fatalf("cpu %v, want 3s (300 ticks)", d)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 0", "1 (x) S 1 2 3 4 5 6 7 8 9 10 -1 0"} {
		if _, err := parseProcStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// This test process's own CPU is read back, and grows as it spins.
func TestProcessCPUOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	pid := os.Getpid()
	before, err := ProcessCPU([]int{pid})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		now, err := ProcessCPU([]int{pid})
		if err != nil {
			t.Fatal(err)
		}
		if now > before {
			return
		}
		for i := 0; i < 1e6; i++ { // burn a little CPU between reads
			_ = i * i
		}
	}
	t.Fatal("this process's CPU never grew")
}

func FuzzParseProcStatCPU(f *testing.F) {
	f.Add([]byte("4242 (java) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 30 0 123 0 0\n"))
	f.Add([]byte("1 ()) S 1 2 3 4 5 6 7 8 9 10 18446744073709551615 1 0"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseProcStatCPU(b); err == nil && d < 0 {
			t.Fatalf("negative cpu %v", d)
		}
	})
}
