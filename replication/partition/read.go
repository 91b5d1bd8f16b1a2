package partition

import (
	"fmt"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Isolation says how far a fetch may read (Kafka's FetchIsolation).
type Isolation int8

// Isolations.
const (
	// IsolationLogEnd reads to the log end offset: followers.
	IsolationLogEnd Isolation = iota
	// IsolationHighWatermark reads committed records only: consumers at
	// read_uncommitted.
	IsolationHighWatermark
	// IsolationTxnCommitted reads to the last stable offset: consumers at
	// read_committed. Without transactions it is the high watermark.
	IsolationTxnCommitted
)

// NoEpoch is the value of an absent epoch in a request (-1).
const NoEpoch int32 = -1

// FetchParams is one partition of a Fetch request.
type FetchParams struct {
	// ReplicaID is the fetching follower's broker id, or -1 for a consumer.
	ReplicaID int32
	// ReplicaEpoch is the fetching follower's broker epoch
	// (ReplicaState.ReplicaEpoch, Fetch v15+, KIP-903), -1 if it did not
	// say; the caller hands it to UpdateFollowerFetch.
	ReplicaEpoch int64
	// FetchOffset is the first offset asked for.
	FetchOffset int64
	// CurrentLeaderEpoch is the leader epoch the fetcher believes in, or
	// NoEpoch to skip the check.
	CurrentLeaderEpoch int32
	// LastFetchedEpoch is the epoch of the fetcher's last batch, or NoEpoch;
	// with it the leader checks for divergence.
	LastFetchedEpoch int32
	// MaxBytes bounds the batches returned, except that one whole batch is
	// returned however large unless Fitting is set (Kafka's
	// minOneMessage).
	MaxBytes int
	// Fitting is Kafka's minOneMessage = false, for the partitions of a
	// fetch after the first that returned records: a first batch larger
	// than MaxBytes is not returned (no records, as Kafka's
	// firstEntryIncomplete), so one response holds at most one batch past
	// its bound.
	Fitting bool
	// Isolation is the consumer's isolation level: IsolationHighWatermark or
	// IsolationTxnCommitted, the same without transactions. A consumer never
	// reads past the high watermark, and a follower (ReplicaID >= 0) always
	// reads to the log end, whatever Isolation says (Kafka's
	// FetchIsolation.of).
	Isolation Isolation
}

// EpochEndOffset is an epoch and the offset it ended at: the answer to
// OffsetForLeaderEpoch, and a fetch's DivergingEpoch.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// FetchResult is the answer to one partition of a fetch.
type FetchResult struct {
	// Records are whole batches, raw as stored; the first may hold offsets
	// below FetchOffset. They may be the leader's in-memory copy of its
	// newest batches: read them, never write them.
	Records          []byte
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	LogEndOffset     int64
	// DivergingEpoch is set when the follower's log diverges from the
	// leader's: it should truncate to EndOffset (or below, where its own
	// epoch Epoch ended) and fetch again. Records is empty then.
	DivergingEpoch *EpochEndOffset
}

// Read answers a fetch (Kafka's Partition.fetchRecords). Only the leader
// serves fetches (NOT_LEADER_OR_FOLLOWER, and for a follower outside the
// assignment too); a CurrentLeaderEpoch below the replica's is
// FENCED_LEADER_EPOCH, above it UNKNOWN_LEADER_EPOCH. With a
// LastFetchedEpoch the fetcher's log is checked against the leader's epochs
// first: if that epoch ended before FetchOffset here, or is unknown here,
// the answer is a DivergingEpoch and no records. An offset outside the log
// is OFFSET_OUT_OF_RANGE. Records are whole batches below the high watermark
// for consumers, below the log end for followers.
func (p *Partition) Read(f FetchParams) (FetchResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	res, maxOffset, err := p.readPositionsLocked(f)
	if err != nil || res.DivergingEpoch != nil || f.FetchOffset >= maxOffset {
		return res, err
	}
	raw, ok := p.tail.Read(f.FetchOffset, f.MaxBytes)
	if !ok {
		var err error
		if raw, err = p.log.Read(f.FetchOffset, f.MaxBytes); err != nil {
			return FetchResult{}, fmt.Errorf("partition %s: read at %d: %w", p.name, f.FetchOffset, storageError(err))
		}
	}
	res.Records = below(raw, maxOffset)
	if f.Fitting && len(res.Records) > f.MaxBytes {
		res.Records = nil
	}
	return res, nil
}

// readPositionsLocked checks a fetch as Read does and returns the
// partition's positions for its answer and the offset it may read up to
// (exclusive): the log end for a follower, the high watermark for a
// consumer.
func (p *Partition) readPositionsLocked(f FetchParams) (FetchResult, int64, error) {
	if p.role != RoleLeader {
		return FetchResult{}, 0, fmt.Errorf("partition %s: broker %d does not lead: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	follower := f.ReplicaID >= 0
	if _, ok := p.remotes[f.ReplicaID]; follower && !ok {
		return FetchResult{}, 0, fmt.Errorf("partition %s: broker %d is not a follower of %v: %w", p.name, f.ReplicaID, p.replicas, errNotLeaderOrFollower)
	}
	if err := p.checkCurrentLeaderEpoch(f.CurrentLeaderEpoch); err != nil {
		return FetchResult{}, 0, err
	}
	res := FetchResult{HighWatermark: p.hwm, LastStableOffset: p.hwm, LogStartOffset: p.log.LogStartOffset(), LogEndOffset: p.log.LogEndOffset()}
	if f.LastFetchedEpoch >= 0 {
		end := p.endOffsetForEpoch(f.LastFetchedEpoch)
		if end.EndOffset < 0 || end.Epoch < 0 {
			// Kafka's validateFetchOffsetAndMaybeGetDivergingEpoch: a
			// DivergingEpoch of (-1, -1) would read as none on the wire.
			return FetchResult{}, 0, fmt.Errorf("partition %s: no end offset for last fetched epoch %d: %w", p.name, f.LastFetchedEpoch, kerr.OffsetOutOfRange)
		}
		if end.Epoch < f.LastFetchedEpoch || end.EndOffset < f.FetchOffset {
			res.DivergingEpoch = &end
			return res, 0, nil
		}
	}
	if f.FetchOffset < res.LogStartOffset || f.FetchOffset > res.LogEndOffset {
		return FetchResult{}, 0, fmt.Errorf("partition %s: fetch offset %d outside [%d, %d]: %w",
			p.name, f.FetchOffset, res.LogStartOffset, res.LogEndOffset, kerr.OffsetOutOfRange)
	}
	maxOffset := res.LogEndOffset
	if !follower {
		maxOffset = p.hwm // Kafka gives consumers no log-end isolation
	}
	return res, maxOffset, nil
}

// below keeps the whole batches of raw that end before maxOffset.
func below(raw []byte, maxOffset int64) []byte {
	pos := 0
	for pos < len(raw) {
		_, last, _, size, err := storage.PeekBatch(raw[pos:])
		if err != nil || last >= maxOffset {
			break
		}
		pos += size
	}
	return raw[:pos]
}

// checkCurrentLeaderEpoch is Kafka's validateCurrentLeaderEpoch.
func (p *Partition) checkCurrentLeaderEpoch(epoch int32) error {
	switch {
	case epoch == NoEpoch:
		return nil
	case epoch < p.leaderEpoch:
		return fmt.Errorf("partition %s: leader epoch %d is older than %d: %w", p.name, epoch, p.leaderEpoch, kerr.FencedLeaderEpoch)
	case epoch > p.leaderEpoch:
		return fmt.Errorf("partition %s: leader epoch %d is newer than %d: %w", p.name, epoch, p.leaderEpoch, kerr.UnknownLeaderEpoch)
	}
	return nil
}

// endOffsetForEpoch is Kafka's LeaderEpochFileCache.endOffsetFor over the
// log's epochs, with a leader's current epoch starting at its start even
// before it has written a batch (Kafka assigns the epoch's start offset
// when the replica becomes leader): the asked epoch if it is the latest,
// with the log end; else the largest epoch at most the asked one (or the
// asked one itself when the log starts after it) with the start of the
// next epoch; (-1, -1) when no epoch follows it.
func (p *Partition) endOffsetForEpoch(epoch int32) EpochEndOffset {
	entries := p.log.Epochs()
	if p.role == RoleLeader && p.leaderEpoch > p.log.LastEpoch() {
		entries = append(entries, storage.EpochEntry{Epoch: p.leaderEpoch, StartOffset: p.leaderEpochStart})
	}
	return kafkaEndOffsetFor(entries, epoch, p.log.LogEndOffset())
}

func kafkaEndOffsetFor(entries []storage.EpochEntry, epoch int32, logEndOffset int64) EpochEndOffset {
	undefined := EpochEndOffset{Epoch: NoEpoch, EndOffset: -1}
	if epoch < 0 || len(entries) == 0 {
		return undefined
	}
	if entries[len(entries)-1].Epoch == epoch {
		return EpochEndOffset{Epoch: epoch, EndOffset: logEndOffset}
	}
	higher := -1 // the first entry after epoch
	for i, e := range entries {
		if e.Epoch > epoch {
			higher = i
			break
		}
	}
	switch higher {
	case -1:
		return undefined
	case 0:
		// The log starts after epoch: the follower keeps what it has
		// below the first epoch the leader holds.
		return EpochEndOffset{Epoch: epoch, EndOffset: entries[0].StartOffset}
	}
	return EpochEndOffset{Epoch: entries[higher-1].Epoch, EndOffset: entries[higher].StartOffset}
}

// LastOffsetForLeaderEpoch answers OffsetForLeaderEpoch (Kafka's
// Partition.lastOffsetForLeaderEpoch): the largest epoch of the log at most
// leaderEpoch and where it ended, or (-1, -1) if the log knows none. A
// replica that neither leads nor follows, or does not lead when
// fetchOnlyFromLeader, is NOT_LEADER_OR_FOLLOWER; currentLeaderEpoch is
// checked as in Read.
func (p *Partition) LastOffsetForLeaderEpoch(currentLeaderEpoch, leaderEpoch int32, fetchOnlyFromLeader bool) (EpochEndOffset, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role == RoleNone || (fetchOnlyFromLeader && p.role != RoleLeader) {
		return EpochEndOffset{}, fmt.Errorf("partition %s: broker %d does not lead: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	if err := p.checkCurrentLeaderEpoch(currentLeaderEpoch); err != nil {
		return EpochEndOffset{}, err
	}
	return p.endOffsetForEpoch(leaderEpoch), nil
}

// ListOffsets timestamps with a meaning of their own (Kafka's
// ListOffsetsRequest constants).
const (
	LatestTimestamp        int64 = -1
	EarliestTimestamp      int64 = -2
	MaxTimestamp           int64 = -3
	EarliestLocalTimestamp int64 = -4
)

// TimestampOffset is the answer to one partition of ListOffsets; Offset
// and Timestamp are -1 when no record qualifies.
type TimestampOffset struct {
	Timestamp   int64
	Offset      int64
	LeaderEpoch int32
}

// ListOffsets answers ListOffsets on the leader (Kafka's
// fetchOffsetForTimestamp): earliest is the log start, latest the high
// watermark (what a consumer may read), MaxTimestamp the record with the
// largest timestamp, and a timestamp t the first committed record stamped
// t or later. Timestamps are found by scanning batches from the log start
// (there is no time index): a record of an uncompressed batch exactly, a
// compressed batch by its first offset.
func (p *Partition) ListOffsets(timestamp int64, currentLeaderEpoch int32) (TimestampOffset, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != RoleLeader {
		return TimestampOffset{}, fmt.Errorf("partition %s: broker %d does not lead: %w", p.name, p.cfg.LocalBrokerID, errNotLeaderOrFollower)
	}
	if err := p.checkCurrentLeaderEpoch(currentLeaderEpoch); err != nil {
		return TimestampOffset{}, err
	}
	switch {
	case timestamp == LatestTimestamp:
		return TimestampOffset{Timestamp: -1, Offset: p.hwm, LeaderEpoch: p.leaderEpoch}, nil
	case timestamp == EarliestTimestamp || timestamp == EarliestLocalTimestamp:
		start := p.log.LogStartOffset()
		return TimestampOffset{Timestamp: -1, Offset: start, LeaderEpoch: p.epochAt(start)}, nil
	case timestamp == MaxTimestamp || timestamp >= 0:
		return p.scanTimestamps(timestamp)
	}
	return TimestampOffset{}, fmt.Errorf("partition %s: ListOffsets timestamp %d: %w", p.name, timestamp, kerr.InvalidRequest)
}

// epochAt is the leader epoch that wrote offset, or -1.
func (p *Partition) epochAt(offset int64) int32 {
	epoch := NoEpoch
	for _, e := range p.log.Epochs() {
		if e.StartOffset > offset {
			break
		}
		epoch = e.Epoch
	}
	if p.role == RoleLeader && p.leaderEpoch > p.log.LastEpoch() && offset >= p.leaderEpochStart {
		epoch = p.leaderEpoch
	}
	return epoch
}

// scanReadBytes is how much one step of a timestamp scan reads.
const scanReadBytes = 1 << 20

func (p *Partition) scanTimestamps(target int64) (TimestampOffset, error) {
	best := TimestampOffset{Timestamp: -1, Offset: -1, LeaderEpoch: NoEpoch}
	for at := p.log.LogStartOffset(); at < p.hwm; {
		raw, err := p.log.Read(at, scanReadBytes)
		if err != nil {
			return TimestampOffset{}, fmt.Errorf("partition %s: scan at %d: %w", p.name, at, storageError(err))
		}
		raw = below(raw, p.hwm)
		if len(raw) == 0 {
			break
		}
		for pos := 0; pos < len(raw); {
			_, _, _, size, err := storage.PeekBatch(raw[pos:])
			if err != nil {
				return TimestampOffset{}, fmt.Errorf("partition %s: scan at %d: %w", p.name, at, storageError(err))
			}
			var b kmsg.RecordBatch
			if err := b.ReadFrom(raw[pos : pos+size]); err != nil {
				return TimestampOffset{}, fmt.Errorf("partition %s: scan at %d: %w: %v", p.name, at, kerr.CorruptMessage, err)
			}
			pos += size
			at = b.FirstOffset + int64(b.LastOffsetDelta) + 1
			if b.Attributes&attrControl != 0 || b.MaxTimestamp < max(target, best.Timestamp+1) {
				continue
			}
			ts, off, err := recordAtTimestamp(raw[pos-size:pos], &b, target)
			if err != nil {
				return TimestampOffset{}, fmt.Errorf("partition %s: scan: %w", p.name, storageError(err))
			}
			best = TimestampOffset{Timestamp: ts, Offset: off, LeaderEpoch: b.PartitionLeaderEpoch}
			if target != MaxTimestamp {
				return best, nil
			}
		}
	}
	return best, nil
}

// recordAtTimestamp finds in b the first record stamped target or later,
// or for MaxTimestamp the record with the batch's largest timestamp.
func recordAtTimestamp(raw []byte, b *kmsg.RecordBatch, target int64) (int64, int64, error) {
	if b.Attributes&attrCompression != 0 {
		return b.MaxTimestamp, b.FirstOffset, nil
	}
	batch, err := storage.DecodeBatch(raw)
	if err != nil {
		return 0, 0, err
	}
	recs, err := batch.Records()
	if err != nil {
		return 0, 0, err
	}
	for _, r := range recs {
		if (target == MaxTimestamp && r.Timestamp == b.MaxTimestamp) || (target >= 0 && r.Timestamp >= target) {
			return r.Timestamp, r.Offset, nil
		}
	}
	return b.MaxTimestamp, b.FirstOffset, nil
}
