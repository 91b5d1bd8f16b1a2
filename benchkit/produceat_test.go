package benchkit

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
)

// The produce workload pointed at a cluster by its brokers' addresses
// alone reads every acknowledged record back, times each once end to end
// (the warm-up record left out), and charges the CPU reader it is given,
// not this process.
func TestProduceAtChargesTheGivenCPU(t *testing.T) {
	tm, _ := cluster.ProfileSettings(cluster.ProfileFast)
	dir, err := os.MkdirTemp("", "kraftlab-produceat-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := newMetaCluster(tm, dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.createTopicsRetrying(ctx, []string{"at"}, 2, 3); err != nil {
		t.Fatal(err)
	}
	// A reader that advances a fixed 10 ms per call: the case must charge
	// exactly one interval of it, two calls apart.
	var calls atomic.Int64
	cpu := func() (time.Duration, bool) { return time.Duration(calls.Add(1)) * 10 * time.Millisecond, true }
	pc, err := ProduceAt(ctx, ProduceWorkload{Seeds: c.brokerSeeds(), Topic: "at", RecordBytes: 100, Acks: AcksAll, Duration: 200 * time.Millisecond, CPU: cpu})
	if err != nil {
		t.Fatal(err)
	}
	// Idempotent under acks=all: each record is read once, and the
	// warm-up record, sent before the clock starts, is not timed.
	if pc.Records <= 0 || pc.EndToEnd.Count != pc.Records || pc.Produce.Count != pc.Records {
		t.Fatalf("case %+v: want every acknowledged record timed once end to end, the warm-up left out", pc)
	}
	if calls.Load() != 2 {
		t.Fatalf("CPU read %d times, want 2 (start and end of the window)", calls.Load())
	}
	mb := float64(pc.Records) * 100 / 1e6
	if want := time.Duration(float64(10*time.Millisecond) / mb); pc.CPUPerMB != want {
		t.Fatalf("CPUPerMB %v, want %v: 10 ms over %.3f MB", pc.CPUPerMB, want, mb)
	}
	// A reader that fails leaves the figure unknown rather than made up.
	pc, err = ProduceAt(ctx, ProduceWorkload{Seeds: c.brokerSeeds(), Topic: "at", RecordBytes: 100, Acks: AcksLeader, Duration: 100 * time.Millisecond,
		CPU: func() (time.Duration, bool) { return 0, false }})
	if err != nil {
		t.Fatal(err)
	}
	if pc.CPUPerMB != 0 {
		t.Fatalf("CPUPerMB %v from a failing reader", pc.CPUPerMB)
	}
}

func TestProduceWorkloadValidate(t *testing.T) {
	ok := ProduceWorkload{Seeds: []string{"127.0.0.1:9092"}, Topic: "t", RecordBytes: 100, Acks: AcksAll, Duration: time.Second}
	for _, c := range []struct {
		edit func(*ProduceWorkload)
		want string
	}{
		{func(w *ProduceWorkload) { w.Seeds = nil }, "no seed brokers"},
		{func(w *ProduceWorkload) { w.Topic = "" }, "no topic"},
		{func(w *ProduceWorkload) { w.RecordBytes = 7 }, "size: 7 B"},
		{func(w *ProduceWorkload) { w.Acks = "0" }, `acks "0"`},
		{func(w *ProduceWorkload) { w.Duration = 0 }, "duration: 0s"},
	} {
		w := ok
		c.edit(&w)
		_, err := ProduceAt(context.Background(), w)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ProduceAt = %v, want %q", err, c.want)
		}
	}
}
