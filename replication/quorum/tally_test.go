package quorum

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Tally is what the quorum's tests apply the committed log to: how many
// data records were committed, their bytes, a CRC-32C over their values in
// offset order (equal on two nodes only if they committed the same values
// in the same order) and the control records seen. Its snapshots hold it.
type Tally struct {
	Records        int64
	Bytes          int64
	CRC            uint32
	ControlRecords int64
	// NextOffset is the offset of the next record to apply.
	NextOffset int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// tallyRecordSize is the size of a tally snapshot's one record: records,
// bytes, control records, CRC.
const tallyRecordSize = 8 + 8 + 8 + 4

// tallyListener is a Listener that keeps a Tally; safe to read from the
// test goroutine.
type tallyListener struct {
	mu    sync.Mutex
	tally Tally
	err   error
}

func (l *tallyListener) HandleCommit(batches []storage.Batch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range batches {
		b := &batches[i]
		if b.FirstOffset != l.tally.NextOffset && l.err == nil {
			l.err = fmt.Errorf("batch at %d, next offset %d", b.FirstOffset, l.tally.NextOffset)
		}
		recs, err := b.Records()
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("decode committed batch at %d: %w", b.FirstOffset, err)
		}
		if b.IsControl() {
			l.tally.ControlRecords += int64(len(recs))
		} else {
			for _, r := range recs {
				l.tally.Records++
				l.tally.Bytes += int64(len(r.Value))
				l.tally.CRC = crc32.Update(l.tally.CRC, castagnoli, r.Value)
			}
		}
		l.tally.NextOffset = b.NextOffset()
	}
}

func (l *tallyListener) HandleLoadSnapshot(s raft.Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(s.Records) != 1 || len(s.Records[0].Value) != tallyRecordSize {
		l.err = fmt.Errorf("snapshot %v: want one record of %d bytes, got %d records", s.ID, tallyRecordSize, len(s.Records))
		return
	}
	v := s.Records[0].Value
	l.tally = Tally{
		Records:        int64(binary.BigEndian.Uint64(v)),
		Bytes:          int64(binary.BigEndian.Uint64(v[8:])),
		ControlRecords: int64(binary.BigEndian.Uint64(v[16:])),
		CRC:            binary.BigEndian.Uint32(v[24:]),
		NextOffset:     s.ID.EndOffset,
	}
}

func (l *tallyListener) HandleLeaderChange(raft.LeaderAndEpoch) {}

func (l *tallyListener) SnapshotRecords() (int64, [][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tally
	b := make([]byte, 0, tallyRecordSize)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Records))
	b = binary.BigEndian.AppendUint64(b, uint64(t.Bytes))
	b = binary.BigEndian.AppendUint64(b, uint64(t.ControlRecords))
	b = binary.BigEndian.AppendUint32(b, t.CRC)
	return t.NextOffset, [][]byte{b}, nil
}

func (l *tallyListener) BeginShutdown() {}

func (l *tallyListener) state() (Tally, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tally, l.err
}
