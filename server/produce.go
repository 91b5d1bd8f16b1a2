package server

import (
	"time"

	"github.com/kraftlab/kraftlab/metadata/cache"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceVersions are the Produce versions Kafka 4.4 serves (v3 on; v13
// names topics by id).
var produceVersions = wire.APIRange{Key: kmsg.Produce.Int16(), MinVersion: 3, MaxVersion: 13}

// handleProduce is Kafka's handleProduceRequest with
// ReplicaManager.appendRecords: each partition's batch goes to its leader
// replica here; acks=-1 waits in purgatory for the high watermark to pass
// every batch, up to the request's timeout (REQUEST_TIMED_OUT). Under a
// deferred flush (FlushAlways) the append does not fsync: the flusher
// does, off this goroutine, and acks=1 waits in purgatory for it.
func (rm *ReplicaManager) handleProduce(req *wire.Request) {
	rm.produce(req.Body.(*kmsg.ProduceRequest), req.Respond)
}

// produce answers a client's r through respond, now or once its acks=-1
// appends are committed or timed out; respond(nil) answers an acks=0
// produce. A client may not write to an internal topic
// (INVALID_TOPIC_EXCEPTION): only the broker's coordinators do.
func (rm *ReplicaManager) produce(r *kmsg.ProduceRequest, respond func(kmsg.Response)) {
	rm.appendRecords(r, false, respond)
}

// appendRecords is Kafka's ReplicaManager.appendRecords: produce, and
// with internal set the group coordinator's writes to __consumer_offsets.
func (rm *ReplicaManager) appendRecords(r *kmsg.ProduceRequest, internal bool, respond func(kmsg.Response)) {
	now := rm.clock.Now()
	img := rm.img.Load()
	resp := kmsg.NewPtrProduceResponse()
	var waits []partition.ProduceWait
	var waitsAt []*kmsg.ProduceResponseTopicPartition
	acksOK := r.Acks == 0 || r.Acks == 1 || r.Acks == -1
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		topic := produceTopic(img, r.Version, t)
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(t.Partitions))
		for j, tp := range t.Partitions {
			rp := &rt.Partitions[j]
			*rp = kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = tp.Partition, -1, -1, -1
			if !acksOK {
				rp.ErrorCode = kerr.InvalidRequiredAcks.Code
				continue
			}
			p, code := rm.replicaFor(topic, r.Version >= 13, tp.Partition)
			if code == 0 && !internal && cache.IsInternal(topic.Name()) {
				code = kerr.InvalidTopicException.Code
			}
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			info, err := p.AppendAsLeader(tp.Records, r.Acks, now)
			if err != nil {
				rp.ErrorCode = partition.ErrorCode(err)
				continue
			}
			rp.BaseOffset, rp.LogStartOffset = info.FirstOffset, info.LogStartOffset
			deferred := p.FlushDeferred()
			if deferred && !info.Duplicate {
				rm.flusher.request(p)
			}
			if info.HighWatermarkMoved {
				rm.produces.CheckAndComplete(p)
			}
			// Followers parked on this partition have data to fetch now.
			rm.fetches.CheckAndComplete(p)
			switch {
			case r.Acks == -1:
				waits = append(waits, partition.ProduceWait{Partition: p, RequiredOffset: info.LastOffset + 1})
				waitsAt = append(waitsAt, rp)
			case r.Acks == 1 && deferred:
				// Answered once the leader's flush covers the batch, as
				// when every append fsynced: what acks=1 acknowledged
				// survives the leader's kill.
				waits = append(waits, partition.ProduceWait{Partition: p, RequiredOffset: info.LastOffset + 1, LeaderFlush: true})
				waitsAt = append(waitsAt, rp)
			}
		}
	}
	if r.Acks == 0 {
		// An acks=0 producer reads no answer (Kafka sends none).
		respond(nil)
		return
	}
	if len(waits) == 0 {
		respond(resp)
		return
	}
	keys := make([]*partition.Partition, len(waits))
	for i, w := range waits {
		keys[i] = w.Partition
	}
	op := &partition.DelayedProduce{Waits: waits, Done: func(done []partition.ProduceWait) {
		for i, w := range done {
			if w.Err != nil {
				waitsAt[i].ErrorCode = partition.ErrorCode(w.Err)
			}
		}
		respond(resp)
	}}
	rm.watch(rm.produces, op, now.Add(time.Duration(r.TimeoutMillis)*time.Millisecond), keys)
}

// produceTopic finds a Produce topic in img, by id from v13 on, else by
// name; nil if the image has no such topic.
func produceTopic(img *image.MetadataImage, version int16, t kmsg.ProduceRequestTopic) *image.TopicImage {
	if version >= 13 {
		return img.Topics().Topic(record.Uuid(t.TopicID))
	}
	return img.Topics().TopicByName(t.Topic)
}

// replicaFor is the hosted replica of topic's partition idx, or the
// error code for why there is none: the topic or partition is unknown
// (UNKNOWN_TOPIC_ID when named by id), or this broker holds no replica
// (NOT_LEADER_OR_FOLLOWER). The replica itself refuses what a follower
// may not serve.
func (rm *ReplicaManager) replicaFor(topic *image.TopicImage, byID bool, idx int32) (*partition.Partition, int16) {
	switch {
	case topic == nil && byID:
		return nil, kerr.UnknownTopicID.Code
	case topic == nil || topic.Partition(idx) == nil:
		return nil, kerr.UnknownTopicOrPartition.Code
	}
	p := rm.partitionByName(topic.Name(), idx)
	if p == nil || p.TopicID() != topic.ID() {
		return nil, kerr.NotLeaderForPartition.Code
	}
	return p, 0
}
