package benchkit

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/google/pprof/profile"
)

// Go accounts CPU per process, not per goroutine, so a node's own share of
// an in-process cluster is measured by sampling: each node is started
// under a pprof label naming it, every goroutine it starts inherits the
// label, and a CPU profile over the measured window sums the samples per
// label. The profile samples at 100 Hz per busy thread, so a figure holds
// roughly one sample per 10 ms of CPU; work done outside a node's
// goroutines (background GC, the writers, timers that fire on a runtime
// thread) carries no label and counts as unattributed.

// nodeLabel is the pprof label naming the node a goroutine works for.
const nodeLabel = "kraftlab.node"

// startLabelled runs start with the goroutine labelled as node id, so
// that everything start spawns is labelled too.
func startLabelled(ctx context.Context, id int32, start func(context.Context) error) error {
	var err error
	pprof.Do(ctx, pprof.Labels(nodeLabel, strconv.Itoa(int(id))), func(ctx context.Context) { err = start(ctx) })
	return err
}

// nodeCPU is the CPU a window's profile attributed to each node, and
// what it could not attribute.
type nodeCPU struct {
	ByNode       map[int32]time.Duration
	Unattributed time.Duration
}

// nodeProfile is a CPU profile running over a measured window.
type nodeProfile struct{ buf bytes.Buffer }

// startNodeProfile starts the process's CPU profile; it fails while
// another one runs (--cpuprofile), and then no node's share is known.
func startNodeProfile() (*nodeProfile, error) {
	p := &nodeProfile{}
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		return nil, fmt.Errorf("per-node CPU: %w", err)
	}
	return p, nil
}

// stop ends the profile and sums its samples by node.
func (p *nodeProfile) stop() (nodeCPU, error) {
	pprof.StopCPUProfile()
	return parseNodeCPU(&p.buf)
}

// parseNodeCPU sums a CPU profile's samples by the node label.
func parseNodeCPU(r *bytes.Buffer) (nodeCPU, error) {
	prof, err := profile.Parse(r)
	if err != nil {
		return nodeCPU{}, fmt.Errorf("per-node CPU: %w", err)
	}
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return nodeCPU{}, fmt.Errorf("per-node CPU: the profile has no cpu nanoseconds")
	}
	out := nodeCPU{ByNode: map[int32]time.Duration{}}
	for _, s := range prof.Sample {
		d := time.Duration(s.Value[idx])
		id, err := strconv.ParseInt(firstLabel(s, nodeLabel), 10, 32)
		if err != nil {
			out.Unattributed += d
			continue
		}
		out.ByNode[int32(id)] += d
	}
	return out, nil
}

func firstLabel(s *profile.Sample, key string) string {
	if v := s.Label[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
