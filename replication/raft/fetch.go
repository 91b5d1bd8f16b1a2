package raft

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchPartition returns the one partition of a Fetch of the metadata log.
func fetchPartition(req *kmsg.FetchRequest) (*kmsg.FetchRequestTopicPartition, bool) {
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		return nil, false
	}
	t := &req.Topics[0]
	if (req.Version >= 13 && t.TopicID != MetadataTopicID) || (req.Version < 13 && t.Topic != MetadataTopic) {
		return nil, false
	}
	p := &t.Partitions[0]
	return p, p.Partition == 0
}

func fetchReplicaID(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

func fetchResponseTopic(req *kmsg.FetchRequest, p kmsg.FetchResponseTopicPartition) kmsg.FetchResponseTopic {
	t := kmsg.NewFetchResponseTopic()
	if req.Version >= 13 {
		t.TopicID = MetadataTopicID
	} else {
		t.Topic = MetadataTopic
	}
	t.Partitions = []kmsg.FetchResponseTopicPartition{p}
	return t
}

// fetchErrorPartition answers a fetch with an error and the leader this node
// knows, so that the fetcher can find it.
func (n *Node) fetchErrorPartition(code int16) kmsg.FetchResponseTopicPartition {
	p := kmsg.NewFetchResponseTopicPartition()
	p.ErrorCode = code
	p.HighWatermark = -1
	p.LogStartOffset = n.log.LogStartOffset()
	p.CurrentLeader.LeaderID = n.leader
	p.CurrentLeader.LeaderEpoch = n.epoch
	return p
}

// validateLeaderOnly checks the epoch of a Fetch or FetchSnapshot.
func (n *Node) validateLeaderOnly(epoch int32) int16 {
	switch {
	case epoch < n.epoch:
		return errFencedLeaderEpoch
	case epoch > n.epoch:
		return errUnknownLeaderEpoch
	case n.role != Leader:
		return errNotLeaderOrFollower
	}
	return errNone
}

type fetchValidity int8

const (
	fetchValid fetchValidity = iota
	fetchDiverging
	fetchSnapshot
)

// validateOffsetAndEpoch checks a fetch position against the leader's log
// (ReplicatedLog.validateOffsetAndEpoch): a position behind the snapshot the
// log starts from needs that snapshot; one whose epoch ended earlier in the
// leader's log has diverged, and the answer names the end of that epoch.
func (n *Node) validateOffsetAndEpoch(offset int64, epoch int32) (fetchValidity, int32, int64) {
	start := n.log.LogStartOffset()
	latest, hasSnapshot := n.log.LatestSnapshot()
	if offset == 0 && hasSnapshot {
		// An empty follower is better served by the snapshot than the log.
		return fetchSnapshot, latest.Epoch, latest.EndOffset
	}
	if start == 0 && offset == 0 {
		return fetchValid, epoch, offset
	}
	if s, ok := n.snapshotAtStart(); ok && (offset < start || (offset == start && epoch != s.Epoch) || epoch < s.Epoch) {
		return fetchSnapshot, latest.Epoch, latest.EndOffset
	}
	e, end := n.endOffsetForEpoch(epoch)
	if e != epoch || end < offset {
		return fetchDiverging, e, end
	}
	return fetchValid, epoch, offset
}

// endOffsetForEpoch is Log.EndOffsetForEpoch, answering for the epochs
// before the log's first batch with the snapshot it starts from.
func (n *Node) endOffsetForEpoch(epoch int32) (int32, int64) {
	if e, end := n.log.EndOffsetForEpoch(epoch); e >= 0 {
		return e, end
	}
	if s, ok := n.snapshotAtStart(); ok && s.Epoch <= epoch {
		return s.Epoch, s.EndOffset
	}
	return 0, n.log.LogStartOffset()
}

func (n *Node) handleFetchRequest(now time.Time, m Message, req *kmsg.FetchRequest) error {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	part, ok := fetchPartition(req)
	if !n.admit(m, req.ClusterID, ok, resp, &resp.ErrorCode) {
		return nil
	}
	if req.MaxWaitMillis < 0 || part.FetchOffset < 0 || part.LastFetchedEpoch < 0 || part.LastFetchedEpoch > part.CurrentLeaderEpoch {
		resp.Topics = []kmsg.FetchResponseTopic{fetchResponseTopic(req, n.fetchErrorPartition(errInvalidRequest))}
		n.reply(m, resp)
		return nil
	}
	if part.CurrentLeaderEpoch >= maxEpoch {
		resp.Topics = []kmsg.FetchResponseTopic{fetchResponseTopic(req, n.fetchErrorPartition(errInvalidRequest))}
		n.reply(m, resp)
		return n.unsafe(false, "Fetch from node %d with epoch %d, which cannot be incremented", fetchReplicaID(req), part.CurrentLeaderEpoch)
	}
	if n.role == Leader && !n.lead.drainAt.IsZero() && !now.Before(n.lead.drainAt) {
		// The records gathered since the linger passed are what this
		// fetch comes for (drainDue).
		if err := n.lead.drain(n, now); err != nil {
			return err
		}
	}
	p := &parkedFetch{
		m:        m,
		req:      req,
		replica:  fetchReplicaID(req),
		offset:   part.FetchOffset,
		deadline: now.Add(time.Duration(req.MaxWaitMillis) * time.Millisecond),
	}
	fp, conclusive, err := n.tryFetch(now, p, true)
	// A fetcher whose high watermark is behind the leader's hears of the
	// new one at once (KIP-1166, Fetch v18; older versions default the
	// field to the maximum, so their fetches park as before).
	conclusive = conclusive || (fp.ErrorCode == errNone && part.HighWatermark < fp.HighWatermark)
	if conclusive || req.MaxWaitMillis == 0 || err != nil {
		resp.Topics = []kmsg.FetchResponseTopic{fetchResponseTopic(req, fp)}
		n.reply(m, resp)
		return err
	}
	// Nothing new: park it until the log end passes its offset, the high
	// watermark moves, or it times out (the fetch purgatory).
	n.lead.parked = append(n.lead.parked, p)
	return nil
}

// completeFetch answers a parked fetch with what the log holds now.
func (n *Node) completeFetch(now time.Time, p *parkedFetch) kmsg.Response {
	resp := p.req.ResponseKind().(*kmsg.FetchResponse)
	fp, _, err := n.tryFetch(now, p, false)
	if err != nil {
		n.logger.Error("complete parked fetch", "replica", p.replica, "err", err)
	}
	resp.Topics = []kmsg.FetchResponseTopic{fetchResponseTopic(p.req, fp)}
	return resp
}

// tryFetch builds the answer to a fetch (tryCompleteFetchRequest). update
// records the fetch in the replica's state, which happens once per request.
// conclusive means the answer should go out now rather than park.
func (n *Node) tryFetch(now time.Time, p *parkedFetch, update bool) (kmsg.FetchResponseTopicPartition, bool, error) {
	part := &p.req.Topics[0].Partitions[0]
	if code := n.validateLeaderOnly(part.CurrentLeaderEpoch); code != errNone {
		return n.fetchErrorPartition(code), true, nil
	}
	ls := n.lead
	fp := kmsg.NewFetchResponseTopicPartition()
	fp.CurrentLeader.LeaderID = n.id
	fp.CurrentLeader.LeaderEpoch = n.epoch
	conclusive := true
	switch kind, epoch, offset := n.validateOffsetAndEpoch(part.FetchOffset, part.LastFetchedEpoch); kind {
	case fetchDiverging:
		fp.DivergingEpoch.Epoch, fp.DivergingEpoch.EndOffset = epoch, offset
	case fetchSnapshot:
		fp.SnapshotID.Epoch, fp.SnapshotID.EndOffset = epoch, offset
	default:
		if end := n.servableEnd(); part.FetchOffset < end {
			maxBytes := n.cfg.FetchMaxBytes
			if p.req.MaxBytes > 0 {
				maxBytes = min(maxBytes, p.req.MaxBytes)
			}
			data, err := n.log.Read(part.FetchOffset, int(maxBytes))
			if err != nil {
				return n.fetchErrorPartition(errUnknownServerError), true, fmt.Errorf("read log at %d: %w", part.FetchOffset, err)
			}
			if end < n.log.LogEndOffset() {
				data = batchesBefore(data, end)
			}
			fp.RecordBatches = data
		}
		conclusive = len(fp.RecordBatches) > 0
		if update {
			// Only a valid fetch moves the replica's state and earns
			// check-quorum credit (LeaderState.updateReplicaState); one told
			// to truncate or to fetch a snapshot does not.
			ls.updateReplica(n, p.replica, part.ReplicaDirectoryID, now, part.FetchOffset)
		}
	}
	fp.HighWatermark = ls.hwm
	fp.LogStartOffset = n.log.LogStartOffset()
	return fp, conclusive, nil
}

func (n *Node) pollFollower(now time.Time) (time.Time, error) {
	if n.cfg.Replication == Push {
		return n.pollPushFollower(now)
	}
	if !n.participates() {
		return n.pollObserver(now), nil
	}
	var wake time.Time
	if !n.shuttingDown {
		if !now.Before(n.fetchDeadline) {
			n.logger.Info("fetch timeout", "leader", n.leader, "epoch", n.epoch)
			return now, n.becomeProspective(now)
		}
		wake = n.fetchDeadline
		if w, sent := n.pollUpdateVoter(now); sent {
			return earliest(wake, w), nil
		} else if !w.IsZero() {
			wake = earliest(wake, w)
		}
	}
	if n.NeedsFlush() {
		// The next Fetch would acknowledge records not yet on disk.
		return wake, nil
	}
	return earliest(wake, n.fetchFromBestNode(now)), nil
}

// pollObserver fetches from the leader, or from any voter to find out who
// leads when the leader stops answering.
func (n *Node) pollObserver(now time.Time) time.Time {
	if !now.Before(n.fetchDeadline) {
		return n.fetchFromAnyVoter(now)
	}
	return earliest(n.fetchDeadline, n.fetchFromBestNode(now))
}

// fetchFromBestNode fetches from the leader, or, while the leader's last
// request timed out or failed, from any voter to learn of a leader change
// (maybeSendFetchToBestNode; voters and observers alike).
func (n *Node) fetchFromBestNode(now time.Time) time.Time {
	switch {
	case n.requestTimedOut(now, n.leader):
		delete(n.conns, n.leader)
		return n.fetchFromAnyVoter(now)
	case n.backingOff(now, n.leader):
		return n.fetchFromAnyVoter(now)
	}
	return n.trySend(now, n.leader, n.fetchOrSnapshotRequest)
}

func (n *Node) fetchOrSnapshotRequest() kmsg.Request {
	if n.fetchingSnapshot != nil {
		return n.fetchSnapshotRequest()
	}
	return n.fetchRequest()
}

func (n *Node) fetchRequest() *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = FetchVersion
	req.ClusterID = &n.cfg.ClusterID
	req.ReplicaState.ID = n.id
	req.MaxWaitMillis = int32(n.cfg.FetchMaxWait / time.Millisecond)
	req.MaxBytes = n.cfg.FetchMaxBytes
	p := kmsg.NewFetchRequestTopicPartition()
	p.CurrentLeaderEpoch = n.epoch
	p.FetchOffset = n.log.LogEndOffset()
	p.LastFetchedEpoch = n.lastEpoch()
	p.PartitionMaxBytes = n.cfg.FetchMaxBytes
	p.ReplicaDirectoryID = n.cfg.DirectoryID
	p.HighWatermark = n.highWatermark()
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = MetadataTopicID
	t.Partitions = []kmsg.FetchRequestTopicPartition{p}
	req.Topics = []kmsg.FetchRequestTopic{t}
	return req
}

func (n *Node) handleFetchResponse(now time.Time, m Message, resp *kmsg.FetchResponse) (bool, error) {
	if resp.ErrorCode != errNone {
		n.logger.Warn("fetch refused", "from", m.From, "error", ErrorName(resp.ErrorCode))
		return false, nil
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].Partition != 0 {
		return false, nil
	}
	p := &resp.Topics[0].Partitions[0]
	if handled, ok, err := n.handleCommonResponse(now, p.ErrorCode, p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch); handled || err != nil {
		return ok, err
	}
	if n.role != Follower || m.From != n.leader || p.ErrorCode != errNone {
		if p.ErrorCode != errNone {
			n.logger.Warn("fetch error", "from", m.From, "error", ErrorName(p.ErrorCode))
		}
		return false, nil
	}
	if p.DivergingEpoch.Epoch >= maxEpoch || p.SnapshotID.Epoch >= maxEpoch {
		return false, n.unsafe(false, "Fetch response from leader %d names epoch %d, which cannot be incremented", m.From, max(p.DivergingEpoch.Epoch, p.SnapshotID.Epoch))
	}
	switch {
	case p.DivergingEpoch.Epoch >= 0:
		if err := n.truncateDiverging(p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset); err != nil {
			return false, err
		}
	case p.SnapshotID.EndOffset >= 0 || p.SnapshotID.Epoch >= 0:
		if p.SnapshotID.EndOffset < 0 || p.SnapshotID.Epoch < 0 {
			n.logger.Error("leader sent an invalid snapshot id", "id", p.SnapshotID)
			return false, nil
		}
		if err := n.startSnapshotFetch(SnapshotID{EndOffset: p.SnapshotID.EndOffset, Epoch: p.SnapshotID.Epoch}); err != nil {
			return false, err
		}
	default:
		data, err := n.fetchedBatches(p.RecordBatches)
		if errors.Is(err, ErrUnsafe) {
			return false, err
		}
		if err != nil {
			n.logger.Warn("bad batches from leader", "from", m.From, "err", err)
			return false, nil
		}
		if len(data) > 0 {
			leo := n.log.LogEndOffset()
			if err := n.log.AppendAsFollower(data); err != nil {
				if storage.FaultOf(err) != storage.NoFault {
					// The disk failed, not the leader's batches: the node
					// must stop (it acknowledges nothing it did not write).
					return false, fmt.Errorf("append fetched batches: %w", err)
				}
				n.logger.Warn("append fetched batches", "err", err)
				return false, nil
			}
			if err := n.votersAppended(data); err != nil {
				return false, err
			}
			n.followerAppended(n.log.LogEndOffset()-leo, now)
		}
		if p.HighWatermark >= 0 {
			n.hwm = max(n.hwm, min(n.log.LogEndOffset(), p.HighWatermark))
			n.noteHighWatermark()
		}
	}
	n.fetchDeadline = now.Add(n.cfg.FetchTimeout)
	n.fetchedFromLeader = true
	return true, nil
}

// fetchedBatches returns the whole batches of a fetch from the log end on:
// it drops batches the log already holds and a partial trailing batch.
func (n *Node) fetchedBatches(data []byte) ([]byte, error) {
	leo := n.log.LogEndOffset()
	start, pos := -1, 0
	for pos < len(data) {
		base, last, epoch, size, err := storage.PeekBatch(data[pos:])
		if errors.Is(err, storage.ErrShortBatch) {
			break
		}
		if err != nil {
			return nil, err
		}
		if epoch > n.epoch {
			// No leader writes in an epoch above its own; such a batch
			// would also lift this node's epoch from its log.
			return nil, n.unsafe(false, "leader %d sent a batch of epoch %d, above its epoch %d", n.leader, epoch, n.epoch)
		}
		switch {
		case last < leo:
		case base == leo || start >= 0:
			if start < 0 {
				start = pos
			}
		default:
			return nil, fmt.Errorf("batch [%d, %d] does not start at the log end offset %d", base, last, leo)
		}
		pos += size
	}
	if start < 0 {
		return nil, nil
	}
	return data[start:pos], nil
}

// truncateDiverging cuts the log back to where it agrees with the leader
// (ReplicatedLog.truncateToEndOffset), never below the high watermark.
func (n *Node) truncateDiverging(epoch int32, end int64) error {
	leo := n.log.LogEndOffset()
	var off int64
	if epoch == 0 {
		off = min(end, leo)
	} else if e, localEnd := n.endOffsetForEpoch(epoch); e == epoch {
		off = min(localEnd, end)
	} else {
		off = localEnd
	}
	if off < n.hwm {
		// Kafka's handleFetchResponse throws KafkaException here.
		return n.unsafe(true, "leader %d asked to truncate to offset %d (diverging epoch %d, end %d), below the high watermark %d",
			n.leader, off, epoch, end, n.hwm)
	}
	if off < n.log.LogStartOffset() {
		return n.unsafe(true, "leader %d asked to truncate to offset %d, below the log start offset %d", n.leader, off, n.log.LogStartOffset())
	}
	if off < leo {
		n.logger.Info("truncating diverged log", "to", off, "from", leo, "epoch", epoch, "leaderEnd", end)
		if err := n.log.TruncateTo(off); err != nil {
			return fmt.Errorf("truncate to %d: %w", off, err)
		}
		n.votersTruncated(off)
		n.emit(Event{Kind: EventTruncated, Leader: n.leader, FromOffset: leo, ToOffset: off})
	}
	return nil
}
