package benchkit

import (
	"context"
	"sync"
	"testing"
	"time"
)

// CPU spent by goroutines a labelled start spawned is the node's; the
// rest is unattributed.
func TestNodeCPUFollowsLabels(t *testing.T) {
	if profiling() {
		t.Skip("go test runs a CPU profile of its own")
	}
	p, err := startNodeProfile()
	if err != nil {
		t.Fatal(err)
	}
	spin := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
	}
	var wg sync.WaitGroup
	if err := startLabelled(context.Background(), 7, func(context.Context) error {
		wg.Go(func() { spin(300 * time.Millisecond) })
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	spin(300 * time.Millisecond)
	wg.Wait()
	c, err := p.stop()
	if err != nil {
		t.Fatal(err)
	}
	// Sampled at 100 Hz: a few samples at least, even on a loaded machine.
	if c.ByNode[7] < 20*time.Millisecond || c.Unattributed < 20*time.Millisecond || len(c.ByNode) != 1 {
		t.Errorf("node 7 %v, unattributed %v, nodes %v; want a share of 300 ms for each", c.ByNode[7], c.Unattributed, c.ByNode)
	}
}
