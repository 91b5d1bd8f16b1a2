package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// idempotentBatch is batch(values...) as an idempotent producer sends it:
// producer id pid, epoch epoch, first sequence seq (header bytes 43-56,
// then the CRC over the attributes onward).
func idempotentBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	raw := batch(values...)
	binary.BigEndian.PutUint64(raw[43:], uint64(pid))
	binary.BigEndian.PutUint16(raw[51:], uint16(epoch))
	binary.BigEndian.PutUint32(raw[53:], uint32(seq))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// initProducerID asks the brokers for a producer id until they have a
// block (the first ask finds none: COORDINATOR_LOAD_IN_PROGRESS).
func initProducerID(t *testing.T, cl *kgo.Client) *kmsg.InitProducerIDResponse {
	t.Helper()
	var resp *kmsg.InitProducerIDResponse
	poll.Until(t, 20*time.Second, "InitProducerId answered", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := kmsg.NewPtrInitProducerIDRequest()
		r, err := req.RequestWith(ctx, cl)
		if err != nil {
			return false
		}
		if r.ErrorCode != 0 && !errors.Is(kerr.ErrorForCode(r.ErrorCode), kerr.CoordinatorLoadInProgress) {
			t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		resp = r
		return r.ErrorCode == 0
	})
	return resp
}

// sendProduce sends r to broker id and returns its one partition's answer.
func sendProduce(t *testing.T, cl *kgo.Client, id int32, r *kmsg.ProduceRequest) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Broker(int(id)).Request(ctx, r)
	if err != nil {
		t.Fatalf("produce to broker %d: %v", id, err)
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// partitionLeader is the leader of topic's partition p in broker 101's
// image, once one is known and not excluded.
func partitionLeader(t *testing.T, ts *testServers, from int32, topic string, p int32, not int32) int32 {
	t.Helper()
	var leader int32 = -1
	waitFor(t, fmt.Sprintf("%s-%d led by a broker other than %d", topic, p, not), func() bool {
		tp := ts.byID[from].image().Topics().TopicByName(topic)
		if tp == nil || tp.Partition(p) == nil {
			return false
		}
		leader = tp.Partition(p).Leader
		return leader >= 0 && leader != not
	})
	return leader
}

// Idempotent producers over real sockets: the brokers list InitProducerId
// and hand out ids from the controller's blocks; a produce sent twice by
// hand is written once and both answers carry its offset, also when the
// retry reaches the next leader after the first one is killed; and kgo
// with idempotence on (its default), acks=all to replication factor 3,
// across a partition leader's kill, writes every record it acknowledged
// exactly once and no record twice.
func TestIdempotentProducerWritesEachRecordOnce(t *testing.T) {
	ts := replicatedCluster(t)
	seeds := ts.brokerAddrs(101, 102, 103)
	adm, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	av, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, adm)
	if err != nil {
		t.Fatal(err)
	}
	var listed bool
	for _, k := range av.ApiKeys {
		if k.ApiKey == kmsg.InitProducerID.Int16() && k.MinVersion == 0 && k.MaxVersion == 5 {
			listed = true
		}
	}
	if !listed {
		t.Fatalf("ApiVersions does not list InitProducerId 0-5: %+v", av.ApiKeys)
	}

	if resp, err := kadm.NewClient(adm).CreateTopic(ctx, 3, 3, nil, "idem"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	for _, id := range []int32{101, 102, 103} {
		for p := range int32(3) {
			waitFor(t, fmt.Sprintf("broker %d hosting idem-%d", id, p), func() bool {
				r, ok := ts.replica(id, "idem", p)
				return ok && r.Role != partition.RoleNone
			})
		}
	}

	// By hand: one batch, sent twice.
	pid := initProducerID(t, adm)
	if pid.ProducerID < 0 || pid.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId answered %+v", pid)
	}
	if again := initProducerID(t, adm); again.ProducerID == pid.ProducerID {
		t.Fatalf("two InitProducerIds both got producer id %d", pid.ProducerID)
	}
	leader := partitionLeader(t, ts, 101, "idem", 0, -1)
	topicID := ts.byID[101].image().Topics().TopicByName("idem").ID()
	hand := produceReq(13, -1, "idem", topicID, 0, idempotentBatch(pid.ProducerID, 0, 0, "hand-0", "hand-1"))
	first := sendProduce(t, adm, leader, hand)
	if first.ErrorCode != 0 {
		t.Fatalf("first send: %v", kerr.ErrorForCode(first.ErrorCode))
	}
	retry := sendProduce(t, adm, leader, produceReq(13, -1, "idem", topicID, 0, idempotentBatch(pid.ProducerID, 0, 0, "hand-0", "hand-1")))
	if retry.ErrorCode != 0 || retry.BaseOffset != first.BaseOffset {
		t.Fatalf("the retry answered %+v, want the first's offset %d", retry, first.BaseOffset)
	}
	gap := sendProduce(t, adm, leader, produceReq(13, -1, "idem", topicID, 0, idempotentBatch(pid.ProducerID, 0, 5, "gap")))
	if gap.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("a sequence gap answered %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", kerr.ErrorForCode(gap.ErrorCode))
	}

	// kgo, idempotent by default, before and across a leader's kill.
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50*time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var values []string
	for i := range 600 {
		values = append(values, fmt.Sprintf("first-%04d", i))
	}
	acked := produceValues(t, prod, "idem", values)
	if len(acked) != len(values) {
		t.Fatalf("%d of %d records acknowledged with every broker up", len(acked), len(values))
	}

	// The hand-made batch's leader dies mid-stream; kgo's in-flight
	// batches are retried on the next leader.
	var more []string
	for i := range 600 {
		more = append(more, fmt.Sprintf("second-%04d", i))
	}
	done := make(chan map[string]bool, 1)
	go func() { done <- produceValues(t, prod, "idem", more) }()
	if err := ts.byID[leader].Kill(); err != nil {
		t.Fatal(err)
	}
	for v := range <-done {
		acked[v] = true
	}
	var live []int32
	for _, id := range []int32{101, 102, 103} {
		if id != leader {
			live = append(live, id)
		}
	}
	next := partitionLeader(t, ts, live[0], "idem", 0, leader)
	late := sendProduce(t, adm, next, produceReq(13, -1, "idem", topicID, 0, idempotentBatch(pid.ProducerID, 0, 0, "hand-0", "hand-1")))
	if late.ErrorCode != 0 || late.BaseOffset != first.BaseOffset {
		t.Fatalf("the retry to the new leader %d answered %+v, want the first's offset %d", next, late, first.BaseOffset)
	}
	if len(acked) < len(values)+len(more)/2 {
		t.Errorf("only %d of %d records acknowledged across the failover", len(acked), len(values)+len(more))
	}
	acked["hand-0"], acked["hand-1"] = true, true

	seen := consumeAll(t, ts.brokerAddrs(live...), "idem", len(acked))
	for v := range acked {
		if seen[v] != 1 {
			t.Errorf("acknowledged %s read %d times", v, seen[v])
		}
	}
	for v, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", v, n)
		}
	}
	t.Logf("%d records acknowledged and read once each; broker %d killed, idem-0 then led by %d", len(acked), leader, next)
}
