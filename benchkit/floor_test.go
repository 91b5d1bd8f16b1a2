package benchkit

import (
	"os"
	"testing"
	"time"
)

// The majority floor waits for a majority of the syncs of each round and
// leaves no file behind; it cannot be faster than one sync alone on the
// same disk by more than the noise of a shared machine.
func TestMajorityFsyncFloor(t *testing.T) {
	dir := t.TempDir()
	one, err := measureFsync(dir, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	maj, err := measureMajorityFsync(dir, DefaultVoters, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if maj.Count < floorMinimum || maj.P50 <= 0 {
		t.Fatalf("majority floor: %d rounds, p50 %v", maj.Count, maj.P50)
	}
	if maj.P50 < one.P50/4 {
		t.Errorf("a majority of %d syncs at once took p50 %v, one sync alone %v", DefaultVoters, maj.P50, one.P50)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the floors left %d files in their folder", len(left))
	}
}
