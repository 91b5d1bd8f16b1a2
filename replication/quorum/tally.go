package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Tally is the state a node builds from the committed log until the
// metadata layer has records of its own to apply: how many data records
// were committed, their bytes, a CRC-32C over their values in offset order
// (equal on two nodes only if they committed the same values in the same
// order), and the control records (LeaderChange) seen. Snapshots hold it.
type Tally struct {
	Records        int64  `json:"records"`
	Bytes          int64  `json:"bytes"`
	CRC            uint32 `json:"crc"`
	ControlRecords int64  `json:"controlRecords"`
	// NextOffset is the offset of the next record to apply: the state is
	// that of the log below it.
	NextOffset int64 `json:"nextOffset"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// tallyVersion is the version of the snapshot record.
const tallyVersion int16 = 0

// tallyRecordSize is the size of the snapshot record's value: version,
// records, bytes, control records, CRC.
const tallyRecordSize = 2 + 8 + 8 + 8 + 4

// snapshotRecord encodes the tally as the one record of a snapshot (its
// NextOffset is the snapshot's end offset).
func (t Tally) snapshotRecord() []byte {
	b := make([]byte, 0, tallyRecordSize)
	b = binary.BigEndian.AppendUint16(b, uint16(tallyVersion))
	b = binary.BigEndian.AppendUint64(b, uint64(t.Records))
	b = binary.BigEndian.AppendUint64(b, uint64(t.Bytes))
	b = binary.BigEndian.AppendUint64(b, uint64(t.ControlRecords))
	return binary.BigEndian.AppendUint32(b, t.CRC)
}

// tallyFromSnapshot decodes a snapshot written by snapshotRecord.
func tallyFromSnapshot(s raft.Snapshot) (Tally, error) {
	if len(s.Records) != 1 || len(s.Records[0].Value) != tallyRecordSize {
		return Tally{}, fmt.Errorf("snapshot %v: want one record of %d bytes, got %d records", s.ID, tallyRecordSize, len(s.Records))
	}
	v := s.Records[0].Value
	if ver := int16(binary.BigEndian.Uint16(v)); ver != tallyVersion {
		return Tally{}, fmt.Errorf("snapshot %v: tally version %d, want %d", s.ID, ver, tallyVersion)
	}
	t := Tally{
		Records:        int64(binary.BigEndian.Uint64(v[2:])),
		Bytes:          int64(binary.BigEndian.Uint64(v[10:])),
		ControlRecords: int64(binary.BigEndian.Uint64(v[18:])),
		CRC:            binary.BigEndian.Uint32(v[26:]),
		NextOffset:     s.ID.EndOffset,
	}
	if t.Records < 0 || t.Bytes < 0 || t.ControlRecords < 0 {
		return Tally{}, fmt.Errorf("snapshot %v: negative counts in %+v", s.ID, t)
	}
	return t, nil
}

// stateMachine is the node's raft.Listener: it applies committed batches to
// the Tally and tells the loop what changed.
type stateMachine struct {
	id    int32
	tally Tally
	// bytesSinceSnapshot counts committed batch bytes since the last
	// snapshot taken or loaded.
	bytesSinceSnapshot int64
	leader             raft.LeaderAndEpoch
	// writable: the node was told it leads, having applied everything
	// before its epoch; only then may its owner append.
	writable bool
	err      error
	// user is the owner's Listener, fed after the Tally.
	user Listener

	onCommit func(next int64)
}

var _ raft.Listener = (*stateMachine)(nil)

var errTallyGap = errors.New("committed batch does not follow the applied ones")

// HandleCommit implements raft.Listener.
func (sm *stateMachine) HandleCommit(batches []storage.Batch) {
	for i := range batches {
		b := &batches[i]
		if b.FirstOffset != sm.tally.NextOffset && sm.err == nil {
			sm.err = fmt.Errorf("%w: batch at %d, next offset %d", errTallyGap, b.FirstOffset, sm.tally.NextOffset)
		}
		recs, err := b.Records()
		if err != nil && sm.err == nil {
			sm.err = fmt.Errorf("decode committed batch at %d: %w", b.FirstOffset, err)
		}
		if b.IsControl() {
			sm.tally.ControlRecords += int64(len(recs))
		} else {
			for _, r := range recs {
				sm.tally.Records++
				sm.tally.Bytes += int64(len(r.Value))
				sm.tally.CRC = crc32.Update(sm.tally.CRC, castagnoli, r.Value)
			}
		}
		sm.bytesSinceSnapshot += int64(b.Size())
		sm.tally.NextOffset = b.NextOffset()
	}
	if sm.user != nil {
		sm.user.HandleCommit(batches)
	}
	if sm.onCommit != nil {
		sm.onCommit(sm.tally.NextOffset)
	}
}

// HandleLoadSnapshot implements raft.Listener.
func (sm *stateMachine) HandleLoadSnapshot(s raft.Snapshot) {
	t, err := tallyFromSnapshot(s)
	if err != nil {
		if sm.err == nil {
			sm.err = err
		}
		return
	}
	sm.tally = t
	sm.bytesSinceSnapshot = 0
	if sm.user != nil {
		sm.user.HandleLoadSnapshot(s)
	}
}

// HandleLeaderChange implements raft.Listener.
func (sm *stateMachine) HandleLeaderChange(l raft.LeaderAndEpoch) {
	sm.leader = l
	sm.writable = l.LeaderID == sm.id
	if sm.user != nil {
		sm.user.HandleLeaderChange(l)
	}
}

// beginShutdown tells the owner's Listener, once.
func (sm *stateMachine) beginShutdown() {
	if sm.user != nil {
		sm.user.BeginShutdown()
		sm.user = nil
	}
}
