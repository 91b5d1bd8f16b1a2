package raftsim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// Reconfig is a change of voter set the simulation drives.
type Reconfig int8

// The reconfigurations.
const (
	// Grow starts from node 1 formatted alone (standalone) and adds nodes
	// 2 and 3.
	Grow Reconfig = iota
	// Shrink starts from five voters and removes two of them, drawn by the
	// seed (the leader among them, often).
	Shrink
	// Swap starts from voters 1 to 3 and replaces one of them, drawn by
	// the seed, with node 4.
	Swap
)

func (r Reconfig) String() string {
	switch r {
	case Grow:
		return "grow"
	case Shrink:
		return "shrink"
	case Swap:
		return "swap"
	}
	return fmt.Sprintf("Reconfig(%d)", r)
}

// ReconfigOptions tunes RunReconfig.
type ReconfigOptions struct {
	Change Reconfig
	// Faults is how many faults the chaos phase injects while the change
	// is under way.
	Faults     int
	WireCheck  bool
	TraceLines int
}

// reconfigEvery is how often the driver looks at the leader to take the
// next step of the change.
const reconfigEvery = 300 * time.Millisecond

// RunReconfig runs one seed of a reconfiguration in a dynamic quorum
// (kraft.version 1): the driver asks the leader, one change at a time, to
// add the voters the target has and remove those it has not (AddVoter
// first, so a swap never shrinks the quorum below its size), and retries
// what the leader refuses for now (not caught up, a change uncommitted, no
// commit in its epoch yet), while random kills, restarts, shutdowns,
// partitions, lossy links and snapshots hit the cluster. After healing, the
// leader must have committed the target voter set, every node must see it,
// and the committed data must agree everywhere. Beside the usual invariants
// (one leader per epoch across every node's persisted state, whatever
// voter set each had; monotonic epochs and high watermark) every step
// checks that no leader lacks a committed record and that nodes agree on
// the voter set at every offset they both committed.
func RunReconfig(seed uint64, ro ReconfigOptions) (*Cluster, error) {
	r := rand.New(rand.NewPCG(seed, 0x7265636f6e66))
	opts := Options{
		Seed:            seed,
		Dynamic:         true,
		Config:          TestConfig(),
		SnapshotPadding: []int{0, 3000}[r.IntN(2)],
		MaxFsync:        []time.Duration{2 * time.Millisecond, 20 * time.Millisecond}[r.IntN(2)],
		WireCheck:       ro.WireCheck,
		TraceLines:      ro.TraceLines,
	}
	var target []int32
	switch ro.Change {
	case Grow:
		opts.Voters, opts.InitialVoters, target = 3, 1, []int32{1, 2, 3}
	case Shrink:
		opts.Voters, opts.InitialVoters = 5, 5
		target = []int32{1, 2, 3, 4, 5}
		r.Shuffle(len(target), func(i, j int) { target[i], target[j] = target[j], target[i] })
		target = target[:3]
	case Swap:
		opts.Voters, opts.InitialVoters = 4, 3
		target = []int32{1, 2, 3}
		out := r.IntN(3)
		target = append(slices.Delete(target, out, out+1), 4)
	default:
		return nil, fmt.Errorf("raftsim: unknown reconfiguration %v", ro.Change)
	}
	slices.Sort(target)
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	initial := c.initialVoters().IDs()
	c.target = initial
	c.record("reconfig %v: %d controllers, %d initial voters, target %v", ro.Change, opts.Voters, opts.InitialVoters, target)
	// While the faults last the driver goes back and forth between the
	// initial voters and the target, so that changes are under way when
	// the faults strike; it starts at a time the seed draws.
	c.reconfig = [2][]int32{initial, target}
	c.churn = true
	c.after(time.Duration(r.Int64N(int64(6*time.Second))), c.reconfigTick)
	if err := c.RunFor(3 * time.Second); err != nil {
		return c, err
	}
	for range ro.Faults {
		c.randomFault(r)
		if err := c.RunFor(time.Duration(200+r.IntN(2800)) * time.Millisecond); err != nil {
			return c, err
		}
	}
	c.churn = false
	c.target = target
	c.record("reconfig: %d changes committed; final target %v", c.changes, target)
	if err := c.HealAndCatchUp(60 * time.Second); err != nil {
		return c, err
	}
	err = c.RunUntil(func() bool { return c.reconfigured() }, 60*time.Second)
	if err != nil {
		return c, fmt.Errorf("voter set %v not reached: %w; %s", target, err, c.describe())
	}
	err = c.RunUntil(func() bool { return c.entriesUpdated() }, 30*time.Second)
	if err != nil {
		return c, fmt.Errorf("voter entries not updated to their listeners: %w; %s", err, c.describe())
	}
	return c, c.Validate()
}

// reconfigured reports whether a leader of the target voter set
// committed it and every running node has it in force.
func (c *Cluster) reconfigured() bool {
	id, _, ok := c.Leader()
	if !ok {
		return false
	}
	leader := c.node(id).node
	st := leader.Status()
	if !slices.Contains(c.target, id) {
		// A leader that removed itself resigns once the change commits.
		return false
	}
	if set, _ := leader.VotersAt(st.HighWatermark - 1); st.HighWatermark <= 0 || !slices.Equal(set.IDs(), c.target) {
		return false
	}
	for _, sn := range c.nodes {
		if sn.node != nil && !slices.Equal(sn.node.Status().Voters, c.target) {
			return false
		}
	}
	return true
}

// entriesUpdated reports whether the leader committed a voter set whose
// entry for each running voter names the listeners of its incarnation,
// which the voters' UpdateRaftVoter (or the leader's own update) wrote.
func (c *Cluster) entriesUpdated() bool {
	id, _, ok := c.Leader()
	if !ok {
		return false
	}
	st := c.node(id).node.Status()
	set, _ := c.node(id).node.VotersAt(st.HighWatermark - 1)
	if st.HighWatermark <= 0 || !slices.Equal(set.IDs(), c.target) {
		return false
	}
	for _, v := range set {
		sn := c.node(v.ID)
		if sn.node != nil && !slices.Equal(v.Endpoints, listeners(v.ID, sn.incarnation)) {
			return false
		}
	}
	return true
}

// reconfigTick takes the next step of the change on the leader, if it has
// none uncommitted.
func (c *Cluster) reconfigTick() {
	defer c.after(reconfigEvery, c.reconfigTick)
	id, epoch, ok := c.Leader()
	if !ok {
		return
	}
	sn := c.node(id)
	if !sn.stopAt.IsZero() {
		return
	}
	if _, pending := sn.node.VoterChange(); pending {
		return
	}
	if c.churn && c.reconfigured() {
		c.changes++
		if slices.Equal(c.target, c.reconfig[0]) {
			c.target = c.reconfig[1]
		} else {
			c.target = c.reconfig[0]
		}
		c.record("reconfig: reached; next target %v", c.target)
	}
	have := sn.node.Voters().IDs()
	var err error
	var what string
	if add := slices.IndexFunc(c.target, func(v int32) bool { return !slices.Contains(have, v) }); add >= 0 {
		what = fmt.Sprintf("add voter %d", c.target[add])
		_, err = sn.node.AddVoter(c.now, epoch, voter(c.target[add]))
	} else if rm := slices.IndexFunc(have, func(v int32) bool { return !slices.Contains(c.target, v) }); rm >= 0 {
		what = fmt.Sprintf("remove voter %d", have[rm])
		_, err = sn.node.RemoveVoter(c.now, epoch, have[rm], directoryID(have[rm]))
	} else {
		return
	}
	switch {
	case err == nil:
		c.record("leader %d: %s", id, what)
	case errors.Is(err, raft.ErrNotCaughtUp), errors.Is(err, raft.ErrLeaderNotReady),
		errors.Is(err, raft.ErrVoterChangePending), errors.Is(err, raft.ErrNotLeader):
		c.note("leader %d: %s: %v", id, what, err)
	default:
		c.fail(fmt.Errorf("leader %d: %s: %w", id, what, err))
	}
	c.afterNode(sn)
}

// checkReconfig holds the invariants of a dynamic quorum, after every
// event.
func (inv *invariants) checkReconfig(c *Cluster) error {
	if err := inv.leaderHasCommitted(c); err != nil {
		return err
	}
	return inv.votersAgree(c)
}

// leaderHasCommitted (committed data is never lost, across voter changes):
// each new leader, when it first leads, holds in its log every record the
// listeners committed below the highest high watermark any leader
// published, as the ledger has them.
func (inv *invariants) leaderHasCommitted(c *Cluster) error {
	for _, sn := range c.nodes {
		if sn.node == nil {
			continue
		}
		st := sn.node.Status()
		if st.Role != raft.Leader || st.Epoch <= inv.checkedEpoch {
			continue
		}
		inv.checkedEpoch = st.Epoch
		if st.LogEndOffset < inv.hwm {
			return fmt.Errorf("CommittedNeverLost: leader %d of epoch %d ends at %d, below the high watermark %d", sn.id, st.Epoch, st.LogEndOffset, inv.hwm)
		}
		err := eachEntry(sn, st.LogStartOffset, inv.hwm, func(off int64, got entry) error {
			if want, ok := c.ledger.entries[off]; ok && got != want {
				return fmt.Errorf("CommittedNeverLost: leader %d of epoch %d holds %+v at committed offset %d, listeners applied %+v", sn.id, st.Epoch, got, off, want)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// votersAgree (the log's voter set agrees up to the commit): any two
// running nodes have the same voter set in force at the last offset both
// committed, where both logs (or the snapshots they start from) reach.
func (inv *invariants) votersAgree(c *Cluster) error {
	var running []*simNode
	for _, sn := range c.nodes {
		if sn.node != nil {
			running = append(running, sn)
		}
	}
	for i, a := range running {
		sa := a.node.Status()
		for _, b := range running[i+1:] {
			sb := b.node.Status()
			off := min(sa.HighWatermark, sb.HighWatermark) - 1
			if off < 0 || off < max(sa.LogStartOffset, sb.LogStartOffset)-1 {
				continue
			}
			va, _ := a.node.VotersAt(off)
			vb, _ := b.node.VotersAt(off)
			if !va.Equal(vb) {
				return fmt.Errorf("VotersAgree: at committed offset %d node %d has voters %v, node %d %v", off, a.id, va, b.id, vb)
			}
		}
	}
	return nil
}
