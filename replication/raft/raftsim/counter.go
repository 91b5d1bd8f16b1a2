package raftsim

import (
	"encoding/binary"
	"fmt"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Counter is the state machine of the simulation, after Kafka's
// ReplicatedCounter: its leader appends the integers that follow the
// committed value, so every committed record must be the previous one plus
// one, on every node. It checks what the quorum hands it as it goes.
type Counter struct {
	id      int32
	ledger  *ledger
	value   int64 // the committed value
	next    int64 // the next offset expected
	leader  raft.LeaderAndEpoch
	pending int64 // appended in this epoch, not yet committed
	// writable: the node told its listener it leads, so it may append.
	writable bool
	// loads counts the snapshots loaded.
	loads int
	err   error
}

func newCounter(id int32, l *ledger) *Counter { return &Counter{id: id, ledger: l} }

func (c *Counter) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("node %d: "+format, append([]any{c.id}, args...)...)
	}
}

// HandleCommit implements raft.Listener.
func (c *Counter) HandleCommit(batches []storage.Batch) {
	for i := range batches {
		b := &batches[i]
		if b.FirstOffset != c.next {
			c.fail("committed batch at offset %d, expected %d", b.FirstOffset, c.next)
			return
		}
		recs, err := b.Records()
		if err != nil {
			c.fail("committed batch at offset %d: %v", b.FirstOffset, err)
			return
		}
		for _, r := range recs {
			e := entry{epoch: b.PartitionLeaderEpoch, control: b.IsControl()}
			if !e.control {
				if len(r.Value) != 8 {
					c.fail("record at offset %d has %d bytes", r.Offset, len(r.Value))
					return
				}
				v := int64(binary.BigEndian.Uint64(r.Value))
				if v != c.value+1 {
					c.fail("record at offset %d is %d after committed value %d", r.Offset, v, c.value)
					return
				}
				c.value = v
				e.value = v
				if c.writable && c.pending > 0 {
					c.pending--
				}
			}
			if err := c.ledger.record(r.Offset, e); err != nil {
				c.fail("%v", err)
				return
			}
		}
		c.next = b.NextOffset()
		if err := c.ledger.boundary(c.next, c.value); err != nil {
			c.fail("%v", err)
			return
		}
	}
}

// HandleLoadSnapshot implements raft.Listener.
func (c *Counter) HandleLoadSnapshot(s raft.Snapshot) {
	if c.writable {
		c.fail("leader loaded snapshot %v (LeaderNeverLoadSnapshot)", s.ID)
	}
	if len(s.Records) == 0 || len(s.Records[0].Value) != 8 {
		c.fail("snapshot %v holds no counter", s.ID)
		return
	}
	c.value = int64(binary.BigEndian.Uint64(s.Records[0].Value))
	c.next = s.ID.EndOffset
	c.loads++
	if err := c.ledger.boundary(c.next, c.value); err != nil {
		c.fail("snapshot %v: %v", s.ID, err)
	}
}

// HandleLeaderChange implements raft.Listener.
func (c *Counter) HandleLeaderChange(l raft.LeaderAndEpoch) {
	c.leader = l
	c.writable = l.LeaderID == c.id
	c.pending = 0
}

// nextRecords returns n records continuing the counter past what is
// committed and pending.
func (c *Counter) nextRecords(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = binary.BigEndian.AppendUint64(nil, uint64(c.value+c.pending+int64(i)+1))
	}
	return out
}

// snapshotRecords is the counter's state for a snapshot: its value, then
// padding so that a snapshot takes several FetchSnapshot chunks.
func (c *Counter) snapshotRecords(padding int) [][]byte {
	recs := [][]byte{binary.BigEndian.AppendUint64(nil, uint64(c.value))}
	for padding > 0 {
		n := min(padding, 512)
		recs = append(recs, make([]byte, n))
		padding -= n
	}
	return recs
}

type entry struct {
	epoch   int32
	value   int64
	control bool
}

// ledger is the record of every committed offset any node applied, and of
// the counter value at every batch boundary; a node that disagrees breaks
// ConsistentCommittedData.
type ledger struct {
	entries    map[int64]entry
	boundaries map[int64]int64
}

func newLedger() *ledger {
	return &ledger{entries: make(map[int64]entry), boundaries: make(map[int64]int64)}
}

func (l *ledger) record(offset int64, e entry) error {
	if old, ok := l.entries[offset]; ok && old != e {
		return fmt.Errorf("ConsistentCommittedData: committed offset %d holds %+v, another node committed %+v", offset, e, old)
	}
	l.entries[offset] = e
	return nil
}

func (l *ledger) boundary(offset, value int64) error {
	if old, ok := l.boundaries[offset]; ok && old != value {
		return fmt.Errorf("ConsistentCommittedData: counter is %d at offset %d, another node had %d", value, offset, old)
	}
	l.boundaries[offset] = value
	return nil
}
