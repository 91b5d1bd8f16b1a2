package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startSnapshotFetch begins downloading the snapshot the leader named; the
// follower sends FetchSnapshot instead of Fetch until it has it all.
func (n *Node) startSnapshotFetch(id SnapshotID) error {
	if n.fetchingSnapshot != nil {
		_ = n.fetchingSnapshot.Abort()
		n.fetchingSnapshot = nil
	}
	if latest, ok := n.log.LatestSnapshot(); ok && latest == id {
		// Already here (a crash between download and truncation).
		return n.installSnapshot(id)
	}
	w, err := n.log.CreateSnapshot(id)
	if err != nil {
		return fmt.Errorf("start fetching snapshot %v: %w", id, err)
	}
	n.logger.Info("fetching snapshot", "id", id, "leader", n.leader)
	n.fetchingSnapshot = w
	return nil
}

func (n *Node) fetchSnapshotRequest() *kmsg.FetchSnapshotRequest {
	id := n.fetchingSnapshot.ID()
	req := kmsg.NewPtrFetchSnapshotRequest()
	req.Version = FetchSnapshotVersion
	req.ClusterID = &n.cfg.ClusterID
	req.ReplicaID = n.id
	req.MaxBytes = n.cfg.FetchMaxBytes
	p := kmsg.NewFetchSnapshotRequestTopicPartition()
	p.CurrentLeaderEpoch = n.epoch
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = id.EndOffset, id.Epoch
	p.Position = n.fetchingSnapshot.Size()
	t := kmsg.NewFetchSnapshotRequestTopic()
	t.Topic = MetadataTopic
	t.Partitions = []kmsg.FetchSnapshotRequestTopicPartition{p}
	req.Topics = []kmsg.FetchSnapshotRequestTopic{t}
	return req
}

func (n *Node) handleFetchSnapshotRequest(now time.Time, m Message, req *kmsg.FetchSnapshotRequest) error {
	resp := req.ResponseKind().(*kmsg.FetchSnapshotResponse)
	// The partition's name is checked below, where a wrong one gets
	// Kafka's partition-level UNKNOWN_TOPIC_OR_PARTITION.
	one := len(req.Topics) == 1 && len(req.Topics[0].Partitions) == 1
	if !n.admit(m, req.ClusterID, one, resp, &resp.ErrorCode) {
		return nil
	}
	t, p := &req.Topics[0], &req.Topics[0].Partitions[0]
	rp := kmsg.NewFetchSnapshotResponseTopicPartition()
	rp.Partition = p.Partition
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = n.leader, n.epoch
	answer := func() {
		rt := kmsg.NewFetchSnapshotResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = []kmsg.FetchSnapshotResponseTopicPartition{rp}
		resp.Topics = []kmsg.FetchSnapshotResponseTopic{rt}
		n.reply(m, resp)
	}
	if t.Topic != MetadataTopic || p.Partition != 0 {
		rp.ErrorCode = errUnknownTopicOrPartition
		answer()
		return nil
	}
	if p.CurrentLeaderEpoch >= maxEpoch || p.SnapshotID.Epoch >= maxEpoch {
		rp.ErrorCode = errInvalidRequest
		answer()
		return n.unsafe(false, "FetchSnapshot from node %d with epoch %d, which cannot be incremented", req.ReplicaID, max(p.CurrentLeaderEpoch, p.SnapshotID.Epoch))
	}
	if code := n.validateLeaderOnly(p.CurrentLeaderEpoch); code != errNone {
		rp.ErrorCode = code
		answer()
		return nil
	}
	id := SnapshotID{EndOffset: p.SnapshotID.EndOffset, Epoch: p.SnapshotID.Epoch}
	maxBytes := n.cfg.FetchMaxBytes
	if req.MaxBytes > 0 {
		maxBytes = min(maxBytes, req.MaxBytes)
	}
	var data []byte
	var size int64
	var err error
	if p.Position >= 0 {
		data, size, err = n.log.ReadSnapshot(id, p.Position, int(maxBytes))
	}
	switch {
	case errors.Is(err, ErrSnapshotNotFound):
		rp.ErrorCode = errSnapshotNotFound
	case p.Position < 0 || p.Position >= size:
		rp.ErrorCode = errPositionOutOfRange
	case err != nil:
		n.logger.Error("read snapshot", "id", id, "err", err)
		rp.ErrorCode = errUnknownServerError
	default:
		n.lead.followingVoter(n, req.ReplicaID, now)
		rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = id.EndOffset, id.Epoch
		rp.Size, rp.Position, rp.Bytes = size, p.Position, data
	}
	answer()
	return nil
}

func (n *Node) handleFetchSnapshotResponse(now time.Time, m Message, resp *kmsg.FetchSnapshotResponse) (bool, error) {
	if resp.ErrorCode != errNone || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return false, nil
	}
	p := &resp.Topics[0].Partitions[0]
	if handled, ok, err := n.handleCommonResponse(now, p.ErrorCode, p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch); handled || err != nil {
		return ok, err
	}
	if n.role != Follower || m.From != n.leader || n.fetchingSnapshot == nil {
		return false, nil
	}
	w := n.fetchingSnapshot
	if p.ErrorCode == errSnapshotNotFound || p.SnapshotID.EndOffset < 0 || p.SnapshotID.Epoch < 0 {
		// The leader replaced the snapshot: start over with a Fetch.
		n.logger.Info("leader no longer has the snapshot", "id", w.ID())
		_ = w.Abort()
		n.fetchingSnapshot = nil
		n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
		return true, nil
	}
	if p.ErrorCode != errNone {
		n.logger.Warn("fetch snapshot error", "error", ErrorName(p.ErrorCode))
		return false, nil
	}
	if p.SnapshotID.Epoch >= maxEpoch {
		return false, n.unsafe(false, "FetchSnapshot response from leader %d names epoch %d, which cannot be incremented", m.From, p.SnapshotID.Epoch)
	}
	id := SnapshotID{EndOffset: p.SnapshotID.EndOffset, Epoch: p.SnapshotID.Epoch}
	if id != w.ID() || p.Position != w.Size() || w.Size()+int64(len(p.Bytes)) > p.Size {
		n.logger.Warn("unexpected snapshot chunk; starting over", "want", w.ID(), "got", id, "position", p.Position, "have", w.Size())
		_ = w.Abort()
		n.fetchingSnapshot = nil
		return false, nil
	}
	if err := w.Append(p.Bytes); err != nil {
		return false, fmt.Errorf("write snapshot %v: %w", id, err)
	}
	if w.Size() == p.Size {
		if err := w.Freeze(); err != nil {
			return false, fmt.Errorf("freeze snapshot %v: %w", id, err)
		}
		n.fetchingSnapshot = nil
		if err := n.installSnapshot(id); err != nil {
			return false, err
		}
	}
	n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
	n.fetchedFromLeader = true
	return true, nil
}

// installSnapshot restarts the follower's log at a downloaded snapshot. The
// snapshot covers only committed records, so its end is a high watermark.
func (n *Node) installSnapshot(id SnapshotID) error {
	if err := n.log.TruncateFullyAndStartAt(id.EndOffset); err != nil {
		return fmt.Errorf("restart the log at snapshot %v: %w", id, err)
	}
	if err := n.log.DeleteSnapshotsBefore(id); err != nil {
		return fmt.Errorf("delete snapshots before %v: %w", id, err)
	}
	if err := n.votersReloaded(); err != nil {
		return err
	}
	n.hwm = max(n.hwm, id.EndOffset)
	n.logger.Info("installed snapshot", "id", id)
	n.emit(Event{Kind: EventSnapshotFetched, Leader: n.leader, Snapshot: id})
	n.noteHighWatermark()
	return nil
}

// CreateSnapshot writes a snapshot of the listener's state at endOffset: the
// state after applying every record before it. endOffset must be committed,
// applied by the listener, past the latest snapshot and at a batch boundary.
// The log start then moves to endOffset, so replicas further behind catch up
// through the snapshot (Kafka keeps more log and cleans it later).
func (n *Node) CreateSnapshot(now time.Time, endOffset int64, records [][]byte) error {
	if err := n.enter(now); err != nil {
		return err
	}
	defer n.exit()
	if err := n.createSnapshot(now, endOffset, records); err != nil {
		return fmt.Errorf("raft node %d: snapshot at %d: %w", n.id, endOffset, err)
	}
	return n.poll(now)
}

func (n *Node) createSnapshot(now time.Time, endOffset int64, records [][]byte) error {
	switch hw := n.highWatermark(); {
	case endOffset > hw:
		return fmt.Errorf("above the high watermark %d", hw)
	case endOffset > n.listenerNext:
		return fmt.Errorf("past what the listener applied (%d)", n.listenerNext)
	case endOffset <= n.log.LogStartOffset():
		return fmt.Errorf("not past the log start offset %d", n.log.LogStartOffset())
	}
	if s, ok := n.log.LatestSnapshot(); ok && endOffset <= s.EndOffset {
		return fmt.Errorf("not past the latest snapshot %v", s)
	}
	data, err := n.log.Read(endOffset-1, 1)
	if err != nil {
		return fmt.Errorf("read the last record: %w", err)
	}
	b, err := storage.DecodeBatch(data)
	if err != nil {
		return fmt.Errorf("read the last record: %w", err)
	}
	if b.LastOffset() != endOffset-1 {
		return fmt.Errorf("inside the batch [%d, %d]", b.FirstOffset, b.LastOffset())
	}
	id := SnapshotID{EndOffset: endOffset, Epoch: b.PartitionLeaderEpoch}
	w, err := n.log.CreateSnapshot(id)
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := w.Append(encodeSnapshot(id.Epoch, b.MaxTimestamp, now, n.snapshotControl(endOffset), records, int(n.cfg.FetchMaxBytes))); err != nil {
		return fmt.Errorf("write snapshot %v: %w", id, err)
	}
	if err := w.Freeze(); err != nil {
		return fmt.Errorf("freeze snapshot %v: %w", id, err)
	}
	n.emit(Event{Kind: EventSnapshotTaken, Snapshot: id})
	start := n.log.LogStartOffset()
	if err := n.log.AdvanceLogStart(id.EndOffset); err != nil {
		return fmt.Errorf("advance the log start to %v: %w", id, err)
	}
	n.history.truncateOld(id.EndOffset - 1)
	n.emit(Event{Kind: EventLogStartAdvanced, FromOffset: start, ToOffset: n.log.LogStartOffset()})
	if err := n.log.DeleteSnapshotsBefore(id); err != nil {
		return fmt.Errorf("delete snapshots before %v: %w", id, err)
	}
	n.logger.Info("created snapshot", "id", id)
	return nil
}

// encodeSnapshot lays out a snapshot as Kafka's RecordsSnapshotWriter does:
// a SnapshotHeader control batch, the data in batches, a SnapshotFooter
// control batch, with offsets counting from zero in the snapshot's epoch.
func encodeSnapshot(epoch int32, lastTimestamp int64, now time.Time, quorum []storage.Record, records [][]byte, maxBatch int) []byte {
	ts := now.UnixMilli()
	var buf []byte
	var off int64
	control := func(r storage.Record) {
		buf = storage.AppendBatch(buf, storage.BatchSpec{BaseOffset: off, LeaderEpoch: epoch, Control: true, Timestamp: ts}, []storage.Record{r})
		off++
	}
	control(storage.SnapshotHeaderRecord(lastTimestamp))
	if len(quorum) > 0 {
		buf = storage.AppendBatch(buf, storage.BatchSpec{BaseOffset: off, LeaderEpoch: epoch, Control: true, Timestamp: ts}, quorum)
		off += int64(len(quorum))
	}
	var recs []storage.Record
	size := storage.BatchHeaderSize
	flush := func() {
		if len(recs) > 0 {
			buf = storage.AppendBatch(buf, storage.BatchSpec{BaseOffset: off, LeaderEpoch: epoch, Timestamp: ts}, recs)
			off += int64(len(recs))
			recs, size = recs[:0], storage.BatchHeaderSize
		}
	}
	for _, v := range records {
		if len(recs) > 0 && size+len(v)+recordOverhead > maxBatch {
			flush()
		}
		recs = append(recs, storage.Record{Value: v})
		size += len(v) + recordOverhead
	}
	flush()
	control(storage.SnapshotFooterRecord())
	return buf
}

// snapshotControl is what a snapshot ending at endOffset holds of the
// quorum itself, after its header as Kafka's RecordsSnapshotWriter writes
// it: the kraft.version and the voter set in force at its last offset,
// when the log has either (a static quorum's snapshots hold neither).
func (n *Node) snapshotControl(endOffset int64) []storage.Record {
	set, at := n.history.at(endOffset - 1)
	version := n.history.kraftVersionAt(endOffset - 1)
	var out []storage.Record
	if version > KRaftVersion0 || at >= 0 {
		out = append(out, storage.KRaftVersionRecord(int16(version)))
	}
	if at >= 0 {
		out = append(out, set.record())
	}
	return out
}

// readSnapshot reads and decodes a whole snapshot for the listener.
func (n *Node) readSnapshot(id SnapshotID) (Snapshot, error) {
	s := Snapshot{ID: id}
	data, err := n.readSnapshotBytes(id)
	if err != nil {
		return s, err
	}
	err = storage.Batches(data, func(_ int, b *storage.Batch) error {
		recs, err := b.Records()
		if err != nil {
			return err
		}
		if !b.IsControl() {
			s.Records = append(s.Records, recs...)
			return nil
		}
		for _, r := range recs {
			if t, err := storage.ControlType(r); err == nil && t == storage.ControlSnapshotHeader && len(r.Value) >= 10 {
				s.LastContainedLogTimestamp = int64(binary.BigEndian.Uint64(r.Value[2:10]))
			}
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("decode snapshot %v: %w", id, err)
	}
	return s, nil
}
