package raftsim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// MixOptions tunes RunMix.
type MixOptions struct {
	// Faults is how many faults the chaos phase injects.
	Faults int
	// WireCheck encodes every message (see Options.WireCheck).
	WireCheck bool
	// TraceLines keeps the trace tail for error messages.
	TraceLines int
	// Replication is the quorum's mode; the zero value is pull.
	Replication raft.Replication
}

// RunMix runs one seed of the randomized mix, in mo.Replication's mode: a
// cluster of 1-5 voters and 0-3 observers elects a leader, suffers a
// random sequence of kills, restarts, graceful shutdowns, partitions (full
// and one-way), lossy links and snapshots while its counter appends, then
// heals; it must then commit again with every node caught up, and its
// committed data must agree everywhere. The invariants are checked after
// every event. Push runs draw a narrow in-flight window half the time.
func RunMix(seed uint64, mo MixOptions) (*Cluster, error) {
	r := rand.New(rand.NewPCG(seed, 0x6d6978))
	cfg := TestConfig()
	if r.IntN(4) == 0 {
		cfg = raft.DefaultConfig()
	}
	if r.IntN(2) == 0 {
		cfg.FetchMaxBytes = 1024
	}
	if r.IntN(2) == 0 {
		cfg.AppendLinger = 25 * time.Millisecond
	}
	if mo.Replication == raft.Push && r.IntN(2) == 0 {
		// A narrow window: streams stall on it and probes often.
		cfg.MaxInflight = 1 + r.IntN(4)
	}
	opts := Options{
		Seed:            seed,
		Voters:          1 + r.IntN(5),
		Observers:       r.IntN(4),
		Config:          cfg,
		Replication:     mo.Replication,
		SnapshotPadding: []int{0, 3000}[r.IntN(2)],
		MaxFsync:        []time.Duration{2 * time.Millisecond, 20 * time.Millisecond, 200 * time.Millisecond}[r.IntN(3)],
		WireCheck:       mo.WireCheck,
		TraceLines:      mo.TraceLines,
	}
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	c.record("mix: %v, %d voters, %d observers, config %+v", mo.Replication, opts.Voters, opts.Observers, cfg)
	if err := c.RunFor(3 * time.Second); err != nil {
		return c, err
	}
	for range mo.Faults {
		c.randomFault(r)
		if err := c.RunFor(time.Duration(200+r.IntN(2800)) * time.Millisecond); err != nil {
			return c, err
		}
	}
	if err := c.HealAndCatchUp(60 * time.Second); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// HealAndCatchUp heals the network, restarts every stopped node and runs
// until a leader has committed past every earlier high watermark and every
// node has applied it.
func (c *Cluster) HealAndCatchUp(limit time.Duration) error {
	c.Heal()
	for _, sn := range c.nodes {
		if sn.node == nil {
			c.Restart(sn.id)
		} else if !sn.stopAt.IsZero() {
			// A shutdown in progress completes; restart it afterwards.
			id := sn.id
			if err := c.RunUntil(func() bool { return !c.Running(id) }, 6*time.Second); err != nil {
				return err
			}
			c.Restart(id)
		}
	}
	target := c.inv.hwm + 1
	err := c.RunUntil(func() bool {
		if c.LeaderHighWatermark() < target {
			return false
		}
		for _, sn := range c.nodes {
			if sn.node == nil || sn.node.Status().AppliedOffset < target {
				return false
			}
		}
		return true
	}, limit)
	if err != nil && c.err == nil {
		err = fmt.Errorf("liveness after healing: %w", err)
	}
	if err != nil {
		return fmt.Errorf("%w; %s", err, c.describe())
	}
	return nil
}

func (c *Cluster) describe() string {
	s := ""
	for _, sn := range c.nodes {
		if sn.node == nil {
			s += fmt.Sprintf("[%d down] ", sn.id)
			continue
		}
		st := sn.node.Status()
		s += fmt.Sprintf("[%d %v e%d l%d hw%d leo%d applied%d] ", sn.id, st.Role, st.Epoch, st.LeaderID, st.HighWatermark, st.LogEndOffset, st.AppliedOffset)
	}
	return s
}

func (c *Cluster) running() []int32 {
	var out []int32
	for _, sn := range c.nodes {
		if sn.node != nil && sn.stopAt.IsZero() {
			out = append(out, sn.id)
		}
	}
	return out
}

func (c *Cluster) stopped() []int32 {
	var out []int32
	for _, sn := range c.nodes {
		if sn.node == nil {
			out = append(out, sn.id)
		}
	}
	return out
}

func pick(r *rand.Rand, ids []int32) (int32, bool) {
	if len(ids) == 0 {
		return 0, false
	}
	return ids[r.IntN(len(ids))], true
}

// randomFault injects one fault, chosen by weight.
func (c *Cluster) randomFault(r *rand.Rand) {
	leader, _, hasLeader := c.Leader()
	faults := []Weighted{
		{Weight: 10, Apply: func() {
			if id, ok := pick(r, c.running()); ok {
				c.Kill(id)
			}
		}},
		{Weight: 10, Apply: func() {
			if hasLeader {
				c.Kill(leader)
			}
		}},
		{Weight: 15, Apply: func() {
			if id, ok := pick(r, c.stopped()); ok {
				c.Restart(id)
			}
		}},
		{Weight: 4, Apply: func() {
			// Everyone at once: each loses its unflushed records.
			for _, id := range c.running() {
				c.Kill(id)
			}
		}},
		{Weight: 4, Apply: func() {
			voters := c.Voters()
			r.Shuffle(len(voters), func(i, j int) { voters[i], voters[j] = voters[j], voters[i] })
			for _, id := range voters[:len(voters)/2+1] {
				c.Kill(id)
			}
		}},
		{Weight: 5, Apply: func() {
			if id, ok := pick(r, c.running()); ok {
				c.Shutdown(id)
			}
		}},
		{Weight: 5, Apply: func() {
			if hasLeader {
				c.Shutdown(leader)
			}
		}},
		{Weight: 3, Apply: func() {
			if hasLeader {
				c.Resign(leader)
			}
		}},
		{Weight: 5, Apply: func() {
			if id, ok := pick(r, c.IDs()); ok {
				c.Isolate(id)
			}
		}},
		{Weight: 8, Apply: func() {
			if hasLeader {
				c.Isolate(leader)
			}
		}},
		{Weight: 5, Apply: func() {
			ids := c.IDs()
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			k := 1 + r.IntN(max(1, len(ids)-1))
			c.Partition(ids[:k], ids[k:])
		}},
		{Weight: 5, Apply: func() {
			ids := c.IDs()
			if len(ids) > 1 {
				i := r.IntN(len(ids))
				j := (i + 1 + r.IntN(len(ids)-1)) % len(ids)
				c.CutOneWay(ids[i], ids[j])
			}
		}},
		{Weight: 10, Apply: c.Heal},
		{Weight: 5, Apply: func() { c.Degrade(r.Float64()*0.2, time.Duration(r.IntN(50))*time.Millisecond) }},
		{Weight: 10, Apply: func() {
			if id, ok := pick(r, c.running()); ok {
				c.Snapshot(id)
			}
		}},
		{Weight: 5, Apply: func() {
			if hasLeader {
				c.Snapshot(leader)
			}
		}},
	}
	ApplyWeighted(r, faults)
}

// Weighted is one of several things a run may do, chosen by weight.
type Weighted struct {
	Weight int
	Apply  func()
}

// ApplyWeighted does one of choices, drawn from r by weight.
func ApplyWeighted(r *rand.Rand, choices []Weighted) {
	total := 0
	for _, c := range choices {
		total += c.Weight
	}
	x := r.IntN(total)
	for _, c := range choices {
		if x < c.Weight {
			c.Apply()
			return
		}
		x -= c.Weight
	}
}
