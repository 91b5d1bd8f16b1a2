package fetcher

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets timestamps that ask for the log end and the log start.
const (
	latestTimestamp   int64 = -1
	earliestTimestamp int64 = -2
)

// handleOutOfRangeError finds a new fetch offset for a partition whose
// offset the leader does not hold (Kafka's handleOutOfRangeError and
// fetchOffsetAndTruncate). If the leader's log ends below ours (an unclean
// election), truncate to its end. Otherwise fetch from the greater of our
// end and the leader's log start, emptying our log first when all of it is
// older than the leader's start.
func (t *Thread) handleOutOfRangeError(r outOfRange) {
	latest, err := t.listOffset(r.sentPartition, latestTimestamp)
	var earliest int64
	if err == nil {
		earliest, err = t.listOffset(r.sentPartition, earliestTimestamp)
	}
	now := t.cfg.Clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.parts[r.tp]
	if !ok || st.FetchOffset != r.fetchOffset || st.CurrentLeaderEpoch != r.leaderEpoch {
		return // moved on while the offsets were asked for
	}
	if errors.Is(err, kerr.FencedLeaderEpoch) {
		t.markFailedLocked(r.tp, err)
		return
	}
	if err != nil {
		t.log.Info("could not fetch offsets after out of range", "partition", r.tp, "err", err)
		t.delayLocked(r.tp, now, err.Error())
		return
	}
	leo := st.replica.LogEndOffset()
	switch {
	case latest < leo:
		if err := st.replica.TruncateTo(latest); err != nil {
			t.markFailedLocked(r.tp, fmt.Errorf("truncate %s to leader end %d: %w", r.tp, latest, err))
			return
		}
		st.FetchOffset, st.Lag, st.HasLag = latest, 0, true
		t.log.Warn("reset fetch offset to the leader's end", "partition", r.tp, "from", leo, "to", latest)
	case earliest > leo:
		if err := st.replica.TruncateFullyAndStartAt(earliest); err != nil {
			t.markFailedLocked(r.tp, fmt.Errorf("truncate %s fully to %d: %w", r.tp, earliest, err))
			return
		}
		st.FetchOffset, st.Lag, st.HasLag = earliest, latest-earliest, true
		t.log.Warn("truncated fully to the leader's start", "partition", r.tp, "from", leo, "to", earliest)
	default:
		st.FetchOffset, st.Lag, st.HasLag = leo, latest-leo, true
		t.log.Info("reset fetch offset to the local end", "partition", r.tp, "offset", leo)
	}
	st.LastFetchedEpoch = st.replica.LastFetchedEpoch()
	st.truncations++
	st.lastError = kerr.OffsetOutOfRange.Error()
}

// listOffset asks the leader, as a replica, for one partition's offset at
// timestamp (RemoteLeaderEndPoint.fetchOffset).
func (t *Thread) listOffset(s sentPartition, timestamp int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = t.cfg.ListOffsetsVersion
	req.ReplicaID = t.cfg.BrokerID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = s.tp.Topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition, p.CurrentLeaderEpoch, p.Timestamp = s.tp.Partition, s.leaderEpoch, timestamp
	rt.Partitions = append(rt.Partitions, p)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := t.cfg.Clock.WithTimeout(t.ctx, t.cfg.SocketTimeout)
	defer cancel()
	resp, err := t.cfg.Send(ctx, t.leader, req)
	if err != nil {
		return 0, fmt.Errorf("list offsets of %s: %w", s.tp, err)
	}
	lr, ok := resp.(*kmsg.ListOffsetsResponse)
	if !ok {
		return 0, fmt.Errorf("list offsets of %s answered with %T", s.tp, resp)
	}
	for _, rt := range lr.Topics {
		if rt.Topic != s.tp.Topic {
			continue
		}
		for _, rp := range rt.Partitions {
			if rp.Partition != s.tp.Partition {
				continue
			}
			if rp.ErrorCode != 0 {
				return 0, fmt.Errorf("list offsets of %s: %w", s.tp, kerr.ErrorForCode(rp.ErrorCode))
			}
			return rp.Offset, nil
		}
	}
	return 0, fmt.Errorf("list offsets of %s: partition missing from the answer", s.tp)
}
