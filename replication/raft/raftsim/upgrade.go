package raftsim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// RunUpgrade runs one seed of a kraft.version upgrade: a static quorum of
// three (Options.Upgradable) whose leader is asked, every
// reconfigEvery from a time the seed draws, to upgrade to kraft.version 1
// (refused while a voter has not described itself to it; a no-op once
// its log holds the upgrade), while faults random kills, restarts,
// partitions and snapshots hit the cluster. After healing, every node
// must have kraft.version 1 and the leader must have committed a voter
// set whose entries name each voter's directory id and listeners; the
// dynamic quorum's invariants (no leader lacks a committed record, the
// nodes agree on the voter set at every offset both committed) hold at
// every step, before the upgrade as after it.
func RunUpgrade(seed uint64, faults int, traceLines int) (*Cluster, error) {
	r := rand.New(rand.NewPCG(seed, 0x7570677261646531))
	opts := Options{
		Seed:            seed,
		Voters:          3,
		Upgradable:      true,
		Config:          TestConfig(),
		SnapshotPadding: []int{0, 3000}[r.IntN(2)],
		MaxFsync:        []time.Duration{2 * time.Millisecond, 20 * time.Millisecond}[r.IntN(2)],
		WireCheck:       true,
		TraceLines:      traceLines,
	}
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	c.target = c.Voters()
	c.after(time.Duration(r.Int64N(int64(6*time.Second))), c.upgradeTick)
	if err := c.RunFor(3 * time.Second); err != nil {
		return c, err
	}
	for range faults {
		c.randomFault(r)
		if err := c.RunFor(time.Duration(200+r.IntN(2800)) * time.Millisecond); err != nil {
			return c, err
		}
	}
	if err := c.HealAndCatchUp(60 * time.Second); err != nil {
		return c, err
	}
	err = c.RunUntil(func() bool { return c.upgraded() && c.entriesUpdated() }, 60*time.Second)
	if err != nil {
		return c, fmt.Errorf("kraft.version 1 not reached everywhere: %w; %s", err, c.describe())
	}
	return c, c.Validate()
}

// upgraded reports whether every running node's log holds kraft.version 1.
func (c *Cluster) upgraded() bool {
	return !slices.ContainsFunc(c.nodes, func(sn *simNode) bool {
		return sn.node != nil && sn.node.KRaftVersion() < raft.KRaftVersion1
	})
}

// upgradeTick asks the leader to upgrade.
func (c *Cluster) upgradeTick() {
	defer c.after(reconfigEvery, c.upgradeTick)
	id, epoch, ok := c.Leader()
	if !ok {
		return
	}
	sn := c.node(id)
	if !sn.stopAt.IsZero() {
		return
	}
	off, err := sn.node.UpgradeKRaftVersion(c.now, epoch, raft.KRaftVersion1, false)
	switch {
	case err == nil && off >= 0:
		c.changes++
		c.record("leader %d: kraft.version 1 appended at %d", id, off)
	case err == nil:
	case errors.Is(err, raft.ErrInvalidUpgrade), errors.Is(err, raft.ErrNotLeader):
		c.note("leader %d: upgrade: %v", id, err)
	default:
		c.fail(fmt.Errorf("leader %d: upgrade: %w", id, err))
	}
	c.afterNode(sn)
}
