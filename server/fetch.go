package server

import (
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchVersions are the Fetch versions Kafka 4.4 serves (v4 on; v13 names
// topics by id, v15 carries the replica's id and epoch in ReplicaState).
var fetchVersions = wire.APIRange{Key: kmsg.Fetch.Int16(), MinVersion: 4, MaxVersion: 18}

// maxFetchWait bounds how long a Fetch waits in purgatory, whatever its
// MaxWaitMs (Kafka takes up to 2^31-1 ms, 24.8 days): a client has given
// the request up after its request timeout (30 s by default in Kafka's
// consumer; franz-go's fetch waits 5 s), and an empty answer before
// MaxWaitMs is one Kafka may give too. Until it is answered a parked
// fetch keeps its connection's turn and what it holds charged to the
// listener's memory pool.
const maxFetchWait = 30 * time.Second

// handleFetch is Kafka's handleFetchRequest with
// ReplicaManager.fetchMessages: consumers read to the high watermark,
// followers to the log end, and a follower's fetch offset is its
// acknowledgement (UpdateFollowerFetch). A fetch with less than MinBytes
// to return waits in purgatory up to MaxWaitMillis. Fetch sessions
// (KIP-227) are not kept: every answer has session id 0, so clients send
// full fetches.
func (rm *ReplicaManager) handleFetch(req *wire.Request) {
	rm.fetch(req.Body.(*kmsg.FetchRequest), req.Member, req.Respond)
}

// withEmptyRecords gives every partition without records an empty record
// set instead of a null one, as Kafka answers (MemoryRecords.EMPTY):
// librdkafka refuses a null set as a bad message format.
func withEmptyRecords(resp kmsg.Response) kmsg.Response {
	if fr, ok := resp.(*kmsg.FetchResponse); ok {
		for i := range fr.Topics {
			for j := range fr.Topics[i].Partitions {
				if p := &fr.Topics[i].Partitions[j]; p.RecordBatches == nil {
					p.RecordBatches = []byte{}
				}
			}
		}
	}
	return resp
}

// fetch answers r through respond, now or once it has MinBytes or its
// wait is over; member says the connection authenticated as a member.
func (rm *ReplicaManager) fetch(r *kmsg.FetchRequest, member bool, send func(kmsg.Response)) {
	respond := func(resp kmsg.Response) { send(withEmptyRecords(resp)) }
	now := rm.clock.Now()
	resp := kmsg.NewPtrFetchResponse()
	replicaID, replicaEpoch := r.ReplicaID, int64(-1)
	if r.Version >= 15 {
		replicaID, replicaEpoch = r.ReplicaState.ID, r.ReplicaState.Epoch
	}
	if r.SessionID != 0 {
		// No session was ever handed out.
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		respond(resp)
		return
	}
	img := rm.img.Load()
	isolation := partition.IsolationHighWatermark
	if r.IsolationLevel == 1 {
		isolation = partition.IsolationTxnCommitted
	}
	var parts []partition.FetchPart
	// A partition named twice is served once, at its first place with the
	// last one's parameters: Kafka's FetchRequest.fetchData collects the
	// partitions in a map.
	seen := map[fetchKey]int{}
	resp.Topics = make([]kmsg.FetchResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		var topic *image.TopicImage
		if r.Version >= 13 {
			topic = img.Topics().Topic(record.Uuid(t.TopicID))
		} else {
			topic = img.Topics().TopicByName(t.Topic)
		}
		// Appended within this capacity, so parts' pointers stay valid.
		rt.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(t.Partitions))
		for _, fp := range t.Partitions {
			key := fetchKey{partition: fp.Partition}
			if r.Version >= 13 {
				key.id = t.TopicID
			} else {
				key.name = t.Topic
			}
			if at, ok := seen[key]; ok {
				parts[at].Params.FetchOffset, parts[at].Params.MaxBytes = fp.FetchOffset, int(fp.PartitionMaxBytes)
				parts[at].Params.CurrentLeaderEpoch, parts[at].Params.LastFetchedEpoch = fp.CurrentLeaderEpoch, fp.LastFetchedEpoch
				if fp.PartitionMaxBytes < 0 {
					parts[at].P, parts[at].Resp.ErrorCode = nil, kerr.InvalidRequest.Code
				}
				continue
			}
			seen[key] = len(parts)
			rt.Partitions = append(rt.Partitions, kmsg.NewFetchResponseTopicPartition())
			rp := &rt.Partitions[len(rt.Partitions)-1]
			rp.Partition, rp.HighWatermark = fp.Partition, -1
			part := partition.FetchPart{Resp: rp, Params: partition.FetchParams{
				ReplicaID: replicaID, ReplicaEpoch: replicaEpoch, FetchOffset: fp.FetchOffset,
				CurrentLeaderEpoch: fp.CurrentLeaderEpoch, LastFetchedEpoch: fp.LastFetchedEpoch,
				MaxBytes: int(fp.PartitionMaxBytes), Isolation: isolation,
			}}
			if replicaID >= 0 {
				part.Params.Isolation = partition.IsolationLogEnd
			}
			switch {
			case replicaID >= 0 && !member:
				// Only a member of the playground may fetch as a replica
				// (Kafka authorizes CLUSTER_ACTION for a follower fetch).
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case fp.PartitionMaxBytes < 0:
				rp.ErrorCode = kerr.InvalidRequest.Code
			default:
				part.P, rp.ErrorCode = rm.replicaFor(topic, r.Version >= 13, fp.Partition)
			}
			parts = append(parts, part)
		}
	}
	resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.FetchResponseTopic) bool { return len(t.Partitions) == 0 })
	maxBytes := rm.fetchMaxBytes(replicaID, r.MaxBytes)
	minBytes := min(int(r.MinBytes), maxBytes)
	bytes, urgent := rm.readFetch(parts, maxBytes, now, true)
	wait := min(time.Duration(r.MaxWaitMillis)*time.Millisecond, maxFetchWait)
	if urgent || bytes >= minBytes || wait <= 0 {
		respond(resp)
		return
	}
	var waits []partition.FetchWait
	var keys []*partition.Partition
	for _, part := range parts {
		if part.P == nil {
			continue
		}
		keys = append(keys, part.P)
		if !part.Throttled {
			// A throttled partition's bytes do not count toward MinBytes
			// (Kafka's DelayedFetch), so its fetch waits out MaxWait
			// instead of coming back empty at once.
			waits = append(waits, partition.FetchWait{Partition: part.P, Params: part.Params, LeaderEpoch: part.P.LeaderEpoch()})
		}
	}
	if len(keys) == 0 {
		respond(resp)
		return
	}
	op := &partition.DelayedFetch{Waits: waits, MinBytes: minBytes, Done: func(bool) {
		// Read again for the answer, but the follower's fetch was
		// recorded when it arrived: Kafka's DelayedFetch reads from
		// purgatory without updating the fetch state.
		rm.readFetch(parts, maxBytes, rm.clock.Now(), false)
		respond(resp)
	}}
	rm.watch(rm.fetches, op, now.Add(wait), keys)
}

// fetchKey names a partition of a Fetch: by topic id from v13 on, else by
// name.
type fetchKey struct {
	name      string
	id        [16]byte
	partition int32
}

// fetchMaxBytes is what a fetch may return in all, whatever it asks:
// fetch.max.bytes (Kafka's KafkaApis caps every fetch with it), and for a
// follower also replica.fetch.response.max.bytes.
func (rm *ReplicaManager) fetchMaxBytes(replicaID, asked int32) int {
	n := min(int(asked), rm.limits.fetchMaxBytes)
	if replicaID >= 0 {
		n = min(n, rm.limits.replicaFetchResponseMaxBytes)
	}
	return max(n, 0)
}

// readFetch is partition.ReadFetch with this broker's leader quota and
// its record of follower fetches.
func (rm *ReplicaManager) readFetch(parts []partition.FetchPart, maxBytes int, now time.Time, record bool) (total int, urgent bool) {
	return partition.ReadFetch(parts, maxBytes, now, record, partition.FetchHooks{
		Throttle:        rm.leaderThrottle,
		FollowerFetched: rm.followerFetched,
	})
}

// leaderThrottle says whether the leader's replication quota holds back a
// follower's read of n bytes of p, and counts them when it does not.
func (rm *ReplicaManager) leaderThrottle(p *partition.Partition, replicaID int32, n int, now time.Time) bool {
	if !rm.isLeaderThrottled(p) {
		return false
	}
	if rm.shouldLeaderThrottle(p, replicaID, now) {
		return true
	}
	rm.quotas.leader.Record(now, int64(n))
	return false
}

// followerFetched records a follower's fetch offset as its log end
// offset: the high watermark may move (completing produces and fetches
// waiting on it) and the follower may now belong in the ISR. A fetch it
// cannot record (from a stale incarnation of the follower's broker:
// KIP-903) is an error the partition answers.
func (rm *ReplicaManager) followerFetched(p *partition.Partition, params partition.FetchParams, now time.Time) error {
	moved, err := p.UpdateFollowerFetch(params.ReplicaID, params.ReplicaEpoch, params.FetchOffset, now)
	if err != nil {
		rm.log.Info("follower fetch refused", "partition", p.Name(), "replica", params.ReplicaID, "broker_epoch", params.ReplicaEpoch, "err", err)
		return err
	}
	if moved {
		rm.produces.CheckAndComplete(p)
		rm.fetches.CheckAndComplete(p)
	}
	// A follower outside the ISR that reached the high watermark may
	// join it now (or its expansion be sent again); one inside has
	// nothing to propose (a shrink is the ticker's), and waking the ISR
	// goroutine on its every fetch would take the manager's lock away
	// from the produce and fetch paths.
	if p.HighWatermark() <= params.FetchOffset && !p.InISR(params.ReplicaID) {
		signal(rm.isrWake)
	}
	return nil
}
