package cluster

import (
	"context"
	"fmt"
	"io"

	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/dump"
	"github.com/kraftlab/kraftlab/storage"
)

// The bounds of one metadata log read: a reader asks for at most
// MaxMetadataLogBytes, DefaultMetadataLogBytes when it names none.
const (
	DefaultMetadataLogBytes = 1 << 20
	MaxMetadataLogBytes     = 16 << 20
)

// MetadataLogRead is one read of a node's metadata log (Engine's
// ReadMetadataLog): whole raw batches and where the log stands.
type MetadataLogRead struct {
	// Raw holds whole batches as stored, starting with the one that holds
	// the offset read (or the log start's); empty at the log end.
	Raw []byte
	// LogStartOffset, LogEndOffset and HighWatermark are the node's when
	// it read: the batches whose last offset is below HighWatermark are
	// committed.
	LogStartOffset, LogEndOffset, HighWatermark int64
	// LatestSnapshot is the node's latest snapshot, nil if it has none.
	LatestSnapshot *view.SnapshotID
}

// MetadataLog is a node's committed metadata log, decoded as
// kafka-dump-log --cluster-metadata-decoder decodes a segment.
type MetadataLog struct {
	NodeID int32 `json:"nodeId"`
	// From is the offset asked for, raised to the log start when below it.
	From           int64 `json:"from"`
	LogStartOffset int64 `json:"logStartOffset"`
	LogEndOffset   int64 `json:"logEndOffset"`
	HighWatermark  int64 `json:"highWatermark"`
	// LatestSnapshot is the node's latest snapshot: when the log start is
	// above 0, the records before it live only there.
	LatestSnapshot *view.SnapshotID `json:"latestSnapshot,omitempty"`
	// Dump holds only committed batches (last offset below HighWatermark);
	// positions count from the first batch read.
	Dump *dump.Dump `json:"dump"`
	// Uncommitted counts the batches read at or above the high watermark
	// and left out of Dump.
	Uncommitted int `json:"uncommitted"`
	// NextOffset is the offset to read the rest from (--from), -1 when
	// every committed batch was read.
	NextOffset int64 `json:"nextOffset"`
}

// ValidateMetadataLog checks the bounds of a metadata log read: from is
// at least 0 and maxBytes between 1 and MaxMetadataLogBytes (0: the
// default).
func ValidateMetadataLog(from int64, maxBytes int) error {
	switch {
	case from < 0:
		return fmt.Errorf("metadata log from offset %d: offsets start at 0", from)
	case maxBytes < 0 || maxBytes > MaxMetadataLogBytes:
		return fmt.Errorf("metadata log of %d bytes: between 1 and %d (0: %d)", maxBytes, MaxMetadataLogBytes, DefaultMetadataLogBytes)
	}
	return nil
}

// MetadataLog implements MetadataBrowser: it reads whole batches from
// from on, across segments, until maxBytes or the high watermark, and
// keeps the committed ones.
func (p *Playground) MetadataLog(ctx context.Context, ref condition.NodeRef, from int64, maxBytes int) (MetadataLog, error) {
	if p.closed.Load() {
		return MetadataLog{}, ErrClosed
	}
	if err := ValidateMetadataLog(from, maxBytes); err != nil {
		return MetadataLog{}, Errorf(ErrBadAction, "%v", err)
	}
	if maxBytes == 0 {
		maxBytes = DefaultMetadataLogBytes
	}
	id, err := p.liveNode(ref)
	if err != nil {
		return MetadataLog{}, err
	}
	var raw []byte
	l := MetadataLog{NodeID: id, NextOffset: -1}
	off := from
	for first := true; ; first = false {
		r, err := p.engine.ReadMetadataLog(ctx, id, off, maxBytes-len(raw))
		if err != nil {
			return MetadataLog{}, fmt.Errorf("metadata log of node %d: %w", id, err)
		}
		if first {
			l.From = max(from, r.LogStartOffset)
			l.LogStartOffset, l.LogEndOffset, l.HighWatermark, l.LatestSnapshot = r.LogStartOffset, r.LogEndOffset, r.HighWatermark, r.LatestSnapshot
		}
		committed, next, rest := splitCommitted(r.Raw, l.HighWatermark)
		raw = append(raw, committed...)
		l.Uncommitted += rest
		if next < 0 || next <= off || rest > 0 {
			// The end, or the high watermark's batch: nothing more to commit.
			break
		}
		off = next
		if len(raw) >= maxBytes {
			if off < l.HighWatermark {
				l.NextOffset = off
			}
			break
		}
	}
	l.Dump = dump.Read(raw)
	return l, nil
}

// splitCommitted cuts raw after its last batch below hwm. next is the
// offset after that batch (-1 when raw holds none), rest counts the
// batches left out.
func splitCommitted(raw []byte, hwm int64) (committed []byte, next int64, rest int) {
	next = -1
	pos := 0
	for pos < len(raw) {
		_, last, _, size, err := storage.PeekBatch(raw[pos:])
		if err != nil {
			break
		}
		if last >= hwm {
			for p := pos; p < len(raw); {
				_, _, _, n, err := storage.PeekBatch(raw[p:])
				if err != nil {
					break
				}
				rest++
				p += n
			}
			break
		}
		pos += size
		next = last + 1
	}
	return raw[:pos], next, rest
}

// WriteText prints the log as kafka-dump-log --cluster-metadata-decoder
// prints a segment, between a line saying where the log stands and which
// batches are shown and, at the end, what was left out.
func (l *MetadataLog) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Node %d's metadata log: log start %d, log end %d, high watermark %d; the committed batches (below the high watermark) from offset %d:\n",
		l.NodeID, l.LogStartOffset, l.LogEndOffset, l.HighWatermark, l.From)
	if l.LogStartOffset > 0 {
		snap := ""
		if l.LatestSnapshot != nil {
			snap = fmt.Sprintf(" (end offset %d, epoch %d)", l.LatestSnapshot.EndOffset, l.LatestSnapshot.Epoch)
		}
		fmt.Fprintf(w, "The log starts at offset %d: a snapshot%s holds what came before, and kraftlab snapshot (or the node's own snapshot policy) moved the log start there; browse it with kraftlab metadata.\n", l.LogStartOffset, snap)
	}
	if err := l.Dump.WriteText(w); err != nil {
		return err
	}
	if len(l.Dump.Batches) == 0 {
		fmt.Fprintf(w, "None: no committed batch ends at or after offset %d.\n", l.From)
	}
	if l.Uncommitted > 0 {
		fmt.Fprintf(w, "%d batches at or above the high watermark are not committed yet and are left out.\n", l.Uncommitted)
	}
	if l.NextOffset >= 0 {
		_, err := fmt.Fprintf(w, "More committed batches follow: kraftlab metadata log --node %d --from %d\n", l.NodeID, l.NextOffset)
		return err
	}
	return nil
}
