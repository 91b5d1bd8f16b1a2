package raftsim

import (
	"fmt"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// invariants are those of Kafka's RaftEventSimulationTest, checked after
// every event.
type invariants struct {
	// leaders maps each epoch to the one leader any node persisted for it.
	leaders map[int32]int32
	// epochs is each node's highest persisted epoch.
	epochs map[int32]int32
	// hwm is the highest high watermark a leader published, and leaderEpoch
	// the highest epoch a running leader had.
	hwm         int64
	leaderEpoch int32
	// starts is each node's log start offset when last checked.
	starts map[int32]int64

	// stable enables StableLeadership: once any node persisted a leader,
	// every persisted leader is that one, in that epoch.
	stable       bool
	stableEpoch  int32
	stableLeader int32
	// dataLost: a voter lost its committed data (KillAndDeletePersistentState),
	// so MajorityReachedHighWatermark no longer holds by construction; as in
	// Kafka's canRecoverFromSingleNodeCommittedDataLoss it is not checked.
	dataLost bool
	// checkedEpoch is the last epoch whose leader's log was checked
	// against the committed records (dynamic quorums).
	checkedEpoch int32
}

// forget drops what the invariants remember of one node's persisted state,
// after its folder was wiped.
func (inv *invariants) forget(id int32) {
	delete(inv.epochs, id)
	delete(inv.starts, id)
}

func newInvariants() invariants {
	return invariants{leaders: map[int32]int32{}, epochs: map[int32]int32{}, hwm: -1, starts: map[int32]int64{}, stableLeader: -1}
}

func (inv *invariants) check(c *Cluster) {
	err := inv.verify(c)
	if err == nil && (c.opts.Dynamic || c.opts.Upgradable) {
		err = inv.checkReconfig(c)
	}
	if err != nil {
		c.fail(err)
	}
}

func (inv *invariants) verify(c *Cluster) error {
	var top *simNode
	var topStatus raft.Status
	for _, sn := range c.nodes {
		st, err := sn.store.Read()
		if err != nil {
			return err
		}
		// MonotonicEpoch: a node's persisted epoch never goes back, and a
		// running node works in the epoch it persisted.
		if st.Epoch < inv.epochs[sn.id] {
			return fmt.Errorf("MonotonicEpoch: node %d persisted epoch %d after %d", sn.id, st.Epoch, inv.epochs[sn.id])
		}
		inv.epochs[sn.id] = st.Epoch
		// SingleLeader: one leader per epoch across every node's state.
		if st.LeaderID >= 0 {
			if l, ok := inv.leaders[st.Epoch]; ok && l != st.LeaderID {
				return fmt.Errorf("SingleLeader: node %d says %d leads epoch %d, another said %d", sn.id, st.LeaderID, st.Epoch, l)
			}
			inv.leaders[st.Epoch] = st.LeaderID
			// StableLeadership (Kafka's RaftEventSimulationTest, KAFKA-18439):
			// the first leader any node persisted is the only one.
			if inv.stable {
				if inv.stableLeader < 0 {
					inv.stableEpoch, inv.stableLeader = st.Epoch, st.LeaderID
				} else if st.Epoch != inv.stableEpoch || st.LeaderID != inv.stableLeader {
					return fmt.Errorf("StableLeadership: node %d persisted leader %d of epoch %d after leader %d of epoch %d",
						sn.id, st.LeaderID, st.Epoch, inv.stableLeader, inv.stableEpoch)
				}
			}
		}
		if err := inv.verifySnapshots(c, sn); err != nil {
			return err
		}
		if sn.node == nil {
			continue
		}
		ns := sn.node.Status()
		if ns.HighWatermark > ns.LogEndOffset {
			return fmt.Errorf("node %d's high watermark %d is past its log end offset %d", sn.id, ns.HighWatermark, ns.LogEndOffset)
		}
		if ns.Epoch != st.Epoch {
			return fmt.Errorf("MonotonicEpoch: node %d runs in epoch %d but persisted %d", sn.id, ns.Epoch, st.Epoch)
		}
		if ns.Role == raft.Leader {
			if l := inv.leaders[ns.Epoch]; l != sn.id {
				return fmt.Errorf("SingleLeader: node %d leads epoch %d, persisted leader is %d", sn.id, ns.Epoch, l)
			}
			if top == nil || ns.Epoch > topStatus.Epoch {
				top, topStatus = sn, ns
			}
		}
		// LeaderNeverLoadSnapshot is checked by the counter as it happens.
		if sn.counter.err != nil {
			return sn.counter.err
		}
	}
	if top == nil || topStatus.HighWatermark < 0 || topStatus.Epoch < inv.leaderEpoch {
		// No leader, or only one an election has already replaced.
		return nil
	}
	inv.leaderEpoch = topStatus.Epoch
	hw := topStatus.HighWatermark
	// MonotonicHighWatermark: the newest leader's high watermark never goes back.
	if hw < inv.hwm {
		return fmt.Errorf("MonotonicHighWatermark: leader %d of epoch %d has high watermark %d after %d", top.id, topStatus.Epoch, hw, inv.hwm)
	}
	inv.hwm = hw
	// MajorityReachedHighWatermark: a majority of voters hold the high
	// watermark in their logs, running or not.
	if inv.dataLost || c.opts.Dynamic {
		// A dynamic quorum's voter set moves under the high watermark:
		// a voter added while a little behind may not hold it yet. Its
		// runs check that no leader lacks committed records instead
		// (checkReconfig).
		return nil
	}
	reached := 0
	for _, sn := range c.nodes {
		if sn.voter && sn.log.LogEndOffset() >= hw {
			reached++
		}
	}
	if reached < len(c.voters)/2+1 {
		return fmt.Errorf("MajorityReachedHighWatermark: high watermark %d of leader %d is in %d of %d voters' logs", hw, top.id, reached, len(c.voters))
	}
	return nil
}

// verifySnapshots checks SnapshotAtLogStart when a node's log start moves:
// a log that starts past zero starts at a snapshot, whose epoch the log's
// first batch does not go below.
func (inv *invariants) verifySnapshots(c *Cluster, sn *simNode) error {
	start := sn.log.LogStartOffset()
	if old, ok := inv.starts[sn.id]; ok && old == start {
		return nil
	}
	inv.starts[sn.id] = start
	snaps := sn.log.Snapshots()
	if start == 0 {
		if len(snaps) != 0 {
			return fmt.Errorf("SnapshotAtLogStart: node %d has snapshots %v but its log starts at 0", sn.id, snaps)
		}
		return nil
	}
	if len(snaps) == 0 || snaps[0].EndOffset != start {
		return fmt.Errorf("SnapshotAtLogStart: node %d's log starts at %d, snapshots %v", sn.id, start, snaps)
	}
	if start < sn.log.LogEndOffset() {
		data, err := sn.log.Read(start, 1)
		if err != nil {
			return err
		}
		b, err := storage.DecodeBatch(data)
		if err != nil {
			return err
		}
		if b.FirstOffset != start || b.PartitionLeaderEpoch < snaps[0].Epoch {
			return fmt.Errorf("SnapshotAtLogStart: node %d's snapshot %v is followed by a batch at %d in epoch %d",
				sn.id, snaps[0], b.FirstOffset, b.PartitionLeaderEpoch)
		}
	}
	return nil
}

// Validate checks ConsistentCommittedData at the end of a run: on every
// running node, every committed offset (below what its listener applied)
// holds in its log the record every other node committed there, and its
// snapshot holds the counter value the others had at its offset.
func (c *Cluster) Validate() error {
	if c.err != nil {
		return c.err
	}
	for _, sn := range c.nodes {
		if sn.node == nil {
			continue
		}
		st := sn.node.Status()
		if s, ok := sn.log.LatestSnapshot(); ok {
			if v, ok := c.ledger.boundaries[s.EndOffset]; ok && v != valueInSnapshot(sn.log, s) {
				return fmt.Errorf("ConsistentCommittedData: node %d's snapshot %v holds %d, committed value there is %d", sn.id, s, valueInSnapshot(sn.log, s), v)
			}
		}
		err := eachEntry(sn, st.LogStartOffset, st.AppliedOffset, func(off int64, got entry) error {
			want, ok := c.ledger.entries[off]
			if !ok {
				return fmt.Errorf("ConsistentCommittedData: node %d applied offset %d but no listener saw it", sn.id, off)
			}
			if got != want {
				return fmt.Errorf("ConsistentCommittedData: node %d holds %+v at committed offset %d, others %+v", sn.id, got, off, want)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

var errDone = fmt.Errorf("done")

// eachEntry calls fn with each record of sn's log from offset from up to
// (not including) the batch that starts at or past to, as the ledger
// spells entries.
func eachEntry(sn *simNode, from, to int64, fn func(off int64, got entry) error) error {
	for off := from; off < to; {
		data, err := sn.log.Read(off, 1<<20)
		if err != nil {
			return fmt.Errorf("node %d: %w", sn.id, err)
		}
		next := off
		err = storage.Batches(data, func(_ int, b *storage.Batch) error {
			if b.FirstOffset >= to {
				return errDone
			}
			recs, err := b.Records()
			if err != nil {
				return err
			}
			for _, r := range recs {
				got := entry{epoch: b.PartitionLeaderEpoch, control: b.IsControl()}
				if !got.control {
					got.value = int64(beUint64(r.Value))
				}
				if err := fn(r.Offset, got); err != nil {
					return err
				}
			}
			next = b.NextOffset()
			return nil
		})
		switch {
		case err == errDone:
			return nil
		case err != nil:
			return err
		case next == off:
			return nil // nothing more to read
		}
		off = next
	}
	return nil
}

func beUint64(b []byte) uint64 {
	if len(b) != 8 {
		return 1<<64 - 1
	}
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// valueInSnapshot reads the counter value a snapshot holds, -1 if unreadable.
func valueInSnapshot(l *raft.MemoryLog, id raft.SnapshotID) int64 {
	data, _, err := l.ReadSnapshot(id, 0, 1<<30)
	if err != nil {
		return -1
	}
	v := int64(-1)
	_ = storage.Batches(data, func(_ int, b *storage.Batch) error {
		if b.IsControl() || v >= 0 {
			return nil
		}
		recs, err := b.Records()
		if err == nil && len(recs) > 0 {
			v = int64(beUint64(recs[0].Value))
		}
		return nil
	})
	return v
}
