package datasim

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// serve answers a replica's request as the server's ReplicaManager does,
// through respond (at once, or when a waiting fetch completes).
func (b *broker) serve(req kmsg.Request, respond func(kmsg.Response)) {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		b.handleFetch(r, respond)
	case *kmsg.ListOffsetsRequest:
		respond(b.listOffsets(r))
	default:
		b.s.fail("broker %d: unexpected request %T", b.id, req)
	}
}

// decode is resp as the other end reads it off the wire: encoded and
// decoded again, so that no answer shares memory with the leader's log.
func decode(resp kmsg.Response) kmsg.Response {
	raw := resp.AppendTo(nil)
	out := kmsg.ResponseForKey(resp.Key())
	out.SetVersion(resp.GetVersion())
	if err := out.ReadFrom(raw); err != nil {
		panic(fmt.Sprintf("decode %T: %v", resp, err))
	}
	return out
}

// handleFetch is the server's ReplicaManager.fetch for a replica's
// sessionless Fetch: read each partition to the log end, record the
// follower's fetch offset as its acknowledgement, and wait up to MaxWait
// when there is nothing to return.
func (b *broker) handleFetch(r *kmsg.FetchRequest, respond func(kmsg.Response)) {
	now := b.s.now()
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = r.Version
	var parts []partition.FetchPart
	resp.Topics = make([]kmsg.FetchResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		rt.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(t.Partitions))
		for _, fp := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.NewFetchResponseTopicPartition())
			rp := &rt.Partitions[len(rt.Partitions)-1]
			rp.Partition, rp.HighWatermark = fp.Partition, -1
			part := partition.FetchPart{Resp: rp, Params: partition.FetchParams{
				ReplicaID: r.ReplicaState.ID, ReplicaEpoch: r.ReplicaState.Epoch, FetchOffset: fp.FetchOffset,
				CurrentLeaderEpoch: fp.CurrentLeaderEpoch, LastFetchedEpoch: fp.LastFetchedEpoch,
				MaxBytes: int(fp.PartitionMaxBytes), Isolation: partition.IsolationLogEnd,
			}}
			if t.TopicID != b.s.cfg.TopicID || fp.Partition < 0 || fp.Partition >= b.s.cfg.Partitions {
				rp.ErrorCode = kerr.UnknownTopicID.Code
			} else {
				part.P = b.hosts[fp.Partition].p
			}
			parts = append(parts, part)
		}
	}
	maxBytes := int(r.MaxBytes)
	total, urgent := b.readFetch(parts, maxBytes, now, true)
	wait := time.Duration(r.MaxWaitMillis) * time.Millisecond
	if urgent || total >= int(r.MinBytes) || wait <= 0 {
		respond(resp)
		return
	}
	var waits []partition.FetchWait
	var keys []*partition.Partition
	for _, part := range parts {
		if part.P != nil {
			keys = append(keys, part.P)
			waits = append(waits, partition.FetchWait{Partition: part.P, Params: part.Params, LeaderEpoch: part.P.LeaderEpoch()})
		}
	}
	if len(keys) == 0 {
		respond(resp)
		return
	}
	op := &partition.DelayedFetch{Waits: waits, MinBytes: int(r.MinBytes), Done: func(bool) {
		b.readFetch(parts, maxBytes, b.s.now(), false)
		respond(resp)
	}}
	deadline := now.Add(wait)
	if !b.fetches.TryCompleteElseWatch(op, deadline, keys...) {
		b.expireAt(deadline)
	}
}

// readFetch is partition.ReadFetch as the server calls it, without the
// replication quotas.
func (b *broker) readFetch(parts []partition.FetchPart, maxBytes int, now time.Time, record bool) (total int, urgent bool) {
	return partition.ReadFetch(parts, maxBytes, now, record, partition.FetchHooks{FollowerFetched: b.followerFetched})
}

// followerFetched records a follower's fetch offset: the high watermark
// may move, and a follower outside the ISR that reached it may join.
func (b *broker) followerFetched(p *partition.Partition, params partition.FetchParams, now time.Time) error {
	moved, err := p.UpdateFollowerFetch(params.ReplicaID, params.ReplicaEpoch, params.FetchOffset, now)
	if err != nil {
		b.s.record("broker %d refuses the fetch of %d (epoch %d): %v", b.id, params.ReplicaID, params.ReplicaEpoch, err)
		return err
	}
	h := b.hosts[p.Index()]
	if moved {
		b.completeWaiting(h)
	}
	if p.HighWatermark() <= params.FetchOffset && !p.InISR(params.ReplicaID) {
		b.maybeChangeISR(h)
	}
	return nil
}

// listOffsets is the server's listOffsets for a replica: the log end for
// latest, the log start for earliest.
func (b *broker) listOffsets(r *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := kmsg.NewPtrListOffsetsResponse()
	resp.Version = r.Version
	for _, t := range r.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, lp := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Timestamp, rp.Offset, rp.LeaderEpoch = lp.Partition, -1, -1, -1
			if t.Topic != b.s.cfg.Topic || lp.Partition < 0 || lp.Partition >= b.s.cfg.Partitions {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				b.listOffset(b.hosts[lp.Partition].p, r.ReplicaID, lp, &rp)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// listOffset answers one partition of ListOffsets.
func (b *broker) listOffset(p *partition.Partition, replicaID int32, lp kmsg.ListOffsetsRequestTopicPartition, rp *kmsg.ListOffsetsResponseTopicPartition) {
	to, err := p.ListOffsets(lp.Timestamp, lp.CurrentLeaderEpoch)
	if err != nil {
		rp.ErrorCode = partition.ErrorCode(err)
		return
	}
	rp.Timestamp, rp.Offset, rp.LeaderEpoch = to.Timestamp, to.Offset, to.LeaderEpoch
	if replicaID >= 0 && lp.Timestamp == partition.LatestTimestamp {
		rp.Offset = p.LogEndOffset()
	}
}

// expireAt times out the waiting operations due at deadline.
func (b *broker) expireAt(deadline time.Time) {
	inc := b.incarnation
	b.s.at(deadline, "purgatory expiry", func() {
		if b.alive(inc) {
			b.produces.Expire(b.s.now())
			b.fetches.Expire(b.s.now())
		}
	})
}

// maybeChangeISR proposes an ISR change when the leader of h wants one
// and has none out, as the server's ISR loop does, or sends again the
// one still pending: an answer that did not come in time, a refusal Kafka
// retries. Until the answer, or metadata that ends the change, the
// expansion's new member counts for the high watermark.
func (b *broker) maybeChangeISR(h *host) {
	if h.isrInflight != 0 {
		return
	}
	if h.isrProp != nil {
		// The metadata may have ended the change: a new leader or
		// partition epoch.
		if pend := h.p.State().Pending; pend == nil || pend.LeaderEpoch != h.isrProp.LeaderEpoch || pend.PartitionEpoch != h.isrProp.PartitionEpoch {
			h.isrProp = nil
		}
	}
	if h.isrProp == nil {
		prop, ok := h.p.ISRChange(b.s.now())
		if !ok {
			return
		}
		h.isrProp = &prop
		b.s.record("broker %d proposes p%d %v isr %v (leader epoch %d, partition epoch %d)", b.id, h.idx, prop.Kind, prop.ISR, prop.LeaderEpoch, prop.PartitionEpoch)
	}
	prop := h.isrProp
	b.isrTokens++
	tok := b.isrTokens
	h.isrInflight = tok
	inc := b.incarnation
	b.s.ctrl.AlterPartition(b.id, h.idx, *prop, func(isr []int32, pe int32, err error) {
		if !b.alive(inc) || h.isrInflight != tok {
			return
		}
		h.isrInflight = 0
		if err != nil {
			b.s.record("broker %d p%d isr change refused: %v", b.id, h.idx, err)
			var ke *kerr.Error
			if errors.As(err, &ke) && !h.p.ISRChangeRefused(ke.Code) {
				h.isrProp = nil
			}
			return
		}
		h.isrProp = nil
		moved, err := h.p.ApplyPartitionState(isr, pe, b.s.now())
		if err != nil {
			b.s.record("broker %d p%d apply isr %v partition epoch %d: %v", b.id, h.idx, isr, pe, err)
			return
		}
		if moved {
			b.completeWaiting(h)
		}
	})
	b.later(2*time.Second, "alter partition timeout", func() {
		if h.isrInflight == tok {
			// Sent again on the next check, as Kafka's
			// AlterPartitionManager retries.
			h.isrInflight = 0
		}
	})
}
