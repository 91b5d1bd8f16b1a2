package engine_test

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/storage"
)

// Helpers of the data-plane probes: raw requests to a partition's leader
// and batches a producer could not honestly build.

// partitionTarget is partition 0 of a topic: its id and its leader.
type partitionTarget struct {
	topic  string
	id     [16]byte
	leader int32
}

// leaderOf finds partition 0 of topic and its leader.
func (ht *hostileTarget) leaderOf(t *testing.T, cl *kgo.Client, topic string) partitionTarget {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	pt := partitionTarget{topic: topic, leader: -1}
	for pt.leader < 0 && ctx.Err() == nil {
		md, err := kadm.NewClient(cl).Metadata(ctx, topic)
		if err == nil {
			if p, ok := md.Topics[topic].Partitions[0]; ok && p.Err == nil {
				pt.leader, pt.id = p.Leader, md.Topics[topic].ID
			}
		}
		if pt.leader < 0 {
			time.Sleep(20 * time.Millisecond) // between metadata requests, not a wait for a state
		}
	}
	if pt.leader < 0 {
		t.Fatalf("no leader of %s", topic)
	}
	return pt
}

// request sends req to broker id and returns its answer.
func request[R kmsg.Response](t *testing.T, cl *kgo.Client, id int32, req kmsg.Request) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		t.Fatalf("%T to broker %d: %v", req, id, err)
	}
	return resp.(R)
}

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// lyingBatch is a one-record batch whose header claims count records and
// whose attributes name codec, with payload in place of its records when
// payload is set; its length and CRC are right, as a producer's would be.
func lyingBatch(count int32, codec int16, payload []byte) []byte {
	b := storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: -1, Timestamp: time.Now().UnixMilli()}, []storage.Record{{Value: []byte("x")}})
	if payload != nil {
		b = append(b[:storage.BatchHeaderSize], payload...)
	}
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint16(b[21:], uint16(codec))
	binary.BigEndian.PutUint32(b[23:], uint32(count-1))
	binary.BigEndian.PutUint32(b[57:], uint32(count))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoliTable))
	return b
}

// produceRaw sends one batch to partition 0 at its leader with acks=1
// and returns the partition's answer.
func produceRaw(t *testing.T, cl *kgo.Client, pt partitionTarget, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	r := kmsg.NewPtrProduceRequest()
	r.Acks, r.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = pt.topic, pt.id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	r.Topics = []kmsg.ProduceRequestTopic{rt}
	deadline := time.Now().Add(hostileRecovery)
	for {
		rp := request[*kmsg.ProduceResponse](t, cl, pt.leader, r).Topics[0].Partitions[0]
		// The leader named by metadata may not host the new partition yet.
		retry := rp.ErrorCode == kerr.NotLeaderForPartition.Code || rp.ErrorCode == kerr.UnknownTopicOrPartition.Code || rp.ErrorCode == kerr.UnknownTopicID.Code
		if !retry || time.Now().After(deadline) {
			return rp
		}
		time.Sleep(20 * time.Millisecond) // between produces, as a client backs off
	}
}

func errName(code int16) string {
	if code == 0 {
		return "accepted"
	}
	return kerr.ErrorForCode(code).Error()
}
