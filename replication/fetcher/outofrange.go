package fetcher

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets timestamps that ask for the log end and the log start.
const (
	LatestTimestamp   int64 = -1
	EarliestTimestamp int64 = -2
)

// OutOfRange is a partition the leader answered OFFSET_OUT_OF_RANGE for,
// as the fetch asked for it: the driver asks the leader for its log end
// (LatestTimestamp) and then its log start (EarliestTimestamp) with
// ListOffsetsRequest and hands both to HandleOffsets.
type OutOfRange struct {
	sent sentPartition
}

// Partition is the partition out of range.
func (r OutOfRange) Partition() TopicPartition { return r.sent.tp }

// ListOffsetsRequest is the request asking the leader, as a replica, for
// the partition's offset at timestamp (RemoteLeaderEndPoint.fetchOffset).
func (m *Machine) ListOffsetsRequest(r OutOfRange, timestamp int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = m.cfg.ListOffsetsVersion
	req.ReplicaID = m.cfg.BrokerID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = r.sent.tp.Topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition, p.CurrentLeaderEpoch, p.Timestamp = r.sent.tp.Partition, r.sent.leaderEpoch, timestamp
	rt.Partitions = append(rt.Partitions, p)
	req.Topics = append(req.Topics, rt)
	return req
}

// ListedOffset is the offset the answer to a ListOffsetsRequest for r
// gives, or the error it or its sending (err) met.
func ListedOffset(r OutOfRange, resp kmsg.Response, err error) (int64, error) {
	tp := r.sent.tp
	if err != nil {
		return 0, fmt.Errorf("list offsets of %s: %w", tp, err)
	}
	lr, ok := resp.(*kmsg.ListOffsetsResponse)
	if !ok {
		return 0, fmt.Errorf("list offsets of %s answered with %T", tp, resp)
	}
	for _, rt := range lr.Topics {
		if rt.Topic != tp.Topic {
			continue
		}
		for _, rp := range rt.Partitions {
			if rp.Partition != tp.Partition {
				continue
			}
			if rp.ErrorCode != 0 {
				return 0, fmt.Errorf("list offsets of %s: %w", tp, kerr.ErrorForCode(rp.ErrorCode))
			}
			return rp.Offset, nil
		}
	}
	return 0, fmt.Errorf("list offsets of %s: partition missing from the answer", tp)
}

// HandleOffsets finds a new fetch offset for a partition whose offset the
// leader does not hold, from the leader's log end (latest) and log start
// (earliest), or backs it off when err says they could not be had
// (Kafka's handleOutOfRangeError and fetchOffsetAndTruncate). If the
// leader's log ends below ours (an unclean election), truncate to its end.
// Otherwise fetch from the greater of our end and the leader's log start,
// emptying our log first when all of it is older than the leader's start.
func (m *Machine) HandleOffsets(r OutOfRange, latest, earliest int64, err error, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tp := r.sent.tp
	st, ok := m.parts[tp]
	if !ok || st.FetchOffset != r.sent.fetchOffset || st.CurrentLeaderEpoch != r.sent.leaderEpoch {
		return // moved on while the offsets were asked for
	}
	if errors.Is(err, kerr.FencedLeaderEpoch) {
		m.markFailedLocked(tp, err)
		return
	}
	if err != nil {
		m.log.Info("could not fetch offsets after out of range", "partition", tp, "err", err)
		m.delayLocked(tp, now, err.Error())
		return
	}
	leo := st.replica.LogEndOffset()
	switch {
	case latest < leo:
		if err := st.replica.TruncateTo(latest); err != nil {
			m.markFailedLocked(tp, fmt.Errorf("truncate %s to leader end %d: %w", tp, latest, err))
			return
		}
		st.FetchOffset, st.Lag, st.HasLag = latest, 0, true
		m.log.Warn("reset fetch offset to the leader's end", "partition", tp, "from", leo, "to", latest)
	case earliest > leo:
		if err := st.replica.TruncateFullyAndStartAt(earliest); err != nil {
			m.markFailedLocked(tp, fmt.Errorf("truncate %s fully to %d: %w", tp, earliest, err))
			return
		}
		st.FetchOffset, st.Lag, st.HasLag = earliest, latest-earliest, true
		m.log.Warn("truncated fully to the leader's start", "partition", tp, "from", leo, "to", earliest)
	default:
		st.FetchOffset, st.Lag, st.HasLag = leo, latest-leo, true
		m.log.Info("reset fetch offset to the local end", "partition", tp, "offset", leo)
	}
	st.LastFetchedEpoch = st.replica.LastFetchedEpoch()
	st.truncations++
	st.lastError = kerr.OffsetOutOfRange.Error()
}
