package benchkit

import (
	"math"
	"testing"
)

func TestLoadBetweenSplitsBusyIOWaitAndIdle(t *testing.T) {
	a := machineCPU{Total: 1000, Idle: 400, IOWait: 100}
	b := machineCPU{Total: 2000, Idle: 600, IOWait: 350}
	got, ok := loadBetween(a, b)
	if !ok {
		t.Fatal("two increasing readings have no load")
	}
	// 1000 ticks: 200 idle, 250 iowait, so 550 busy.
	if math.Abs(got.Busy-0.55) > 1e-9 || math.Abs(got.IOWait-0.25) > 1e-9 {
		t.Fatalf("load %+v, want busy 0.55 iowait 0.25", got)
	}
	if _, ok := loadBetween(b, a); ok {
		t.Fatal("readings going backwards gave a load")
	}
	if _, ok := loadBetween(a, a); ok {
		t.Fatal("an empty interval gave a load")
	}
}
