package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var (
	ledID     = record.NewUuid(7, 8)   // "led": one replica, on broker 101
	followsID = record.NewUuid(9, 10)  // "follows": led by broker 102
	waitsID   = record.NewUuid(11, 12) // "waits": led here, 102 in the ISR
)

// replicaRig is broker 101's ReplicaManager without a network: it hosts
// "led" (leader), "follows" (follower of 102, which it cannot reach) and
// "waits" (leader, with 102 in the ISR never fetching).
func replicaRig(t testing.TB) *ReplicaManager {
	t.Helper()
	return replicaRigFlushing(t, storage.FlushNever)
}

// replicaRigFlushing is replicaRig with the partition logs' flush policy.
func replicaRigFlushing(t testing.TB, flush storage.FlushPolicy) *ReplicaManager {
	t.Helper()
	return replicaRigWith(t, flush, dataLimits{})
}

// replicaRigWith is replicaRig with a flush policy and limits.
func replicaRigWith(t testing.TB, flush storage.FlushPolicy, limits dataLimits) *ReplicaManager {
	t.Helper()
	return replicaRigOn(t, flush, limits, nil)
}

// replicaRigOn is replicaRigWith on a disk (nil: the operating system's).
func replicaRigOn(t testing.TB, flush storage.FlushPolicy, limits dataLimits, disk storage.Disk) *ReplicaManager {
	t.Helper()
	ch := &controllerChannel{from: 101, address: func(int32) (string, bool) { return "", false }, clients: map[int32]*wire.Client{}}
	rm, err := newReplicaManager(replicaManagerConfig{
		id: 101, dir: t.TempDir(), log: slog.New(slog.DiscardHandler),
		brokerEpoch: func() int64 { return 5 }, controller: func() int32 { return -1 },
		ctl: ch, client: wire.ClientConfig{From: 101}, flush: flush, limits: limits, disk: disk,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rm.Close)
	d := image.NewMetadataDelta(image.Empty)
	for _, r := range []record.Record{
		&record.TopicRecord{Name: "led", TopicID: ledID},
		&record.PartitionRecord{Version: record.PartitionVersion, TopicID: ledID, Replicas: []int32{101}, Isr: []int32{101}, Leader: 101,
			LeaderEpoch: 3, RemovingReplicas: []int32{}, AddingReplicas: []int32{}, Directories: make([]record.Uuid, 1)},
		&record.TopicRecord{Name: "follows", TopicID: followsID},
		&record.PartitionRecord{Version: record.PartitionVersion, TopicID: followsID, Replicas: []int32{102, 101}, Isr: []int32{102, 101}, Leader: 102,
			RemovingReplicas: []int32{}, AddingReplicas: []int32{}, Directories: make([]record.Uuid, 2)},
		&record.TopicRecord{Name: "waits", TopicID: waitsID},
		&record.PartitionRecord{Version: record.PartitionVersion, TopicID: waitsID, Replicas: []int32{101, 102}, Isr: []int32{101, 102}, Leader: 101,
			RemovingReplicas: []int32{}, AddingReplicas: []int32{}, Directories: make([]record.Uuid, 2)},
	} {
		if err := d.Replay(r); err != nil {
			t.Fatal(err)
		}
	}
	img := d.Apply(image.EmptyProvenance)
	rm.img.Store(img)
	rm.applyImage(img, time.Now())
	return rm
}

func batch(values ...string) []byte {
	recs := make([]storage.Record, len(values))
	for i, v := range values {
		recs[i].Value = []byte(v)
	}
	return storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: -1, Timestamp: time.Now().UnixMilli()}, recs)
}

func produceReq(version, acks int16, topic string, id record.Uuid, idx int32, records []byte) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.Version, r.Acks, r.TimeoutMillis = version, acks, 5000
	t := kmsg.NewProduceRequestTopic()
	t.Topic, t.TopicID = topic, id
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition, p.Records = idx, records
	t.Partitions = []kmsg.ProduceRequestTopicPartition{p}
	r.Topics = []kmsg.ProduceRequestTopic{t}
	return r
}

// syncProduce produces and waits for the answer.
func syncProduce(t *testing.T, rm *ReplicaManager, r *kmsg.ProduceRequest) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	got := make(chan kmsg.Response, 1)
	rm.produce(r, func(resp kmsg.Response) { got <- resp })
	select {
	case resp := <-got:
		return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	case <-time.After(10 * time.Second):
		t.Fatal("no produce answer")
		return kmsg.ProduceResponseTopicPartition{}
	}
}

func fetchReq(replica int32, id record.Uuid, offset int64, minBytes, waitMs int32) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.MaxBytes, r.MinBytes, r.MaxWaitMillis = 18, 1<<20, minBytes, waitMs
	r.ReplicaID, r.ReplicaState.ID = replica, replica
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = id
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset, p.PartitionMaxBytes, p.CurrentLeaderEpoch, p.LastFetchedEpoch = offset, 1<<20, -1, -1
	t.Partitions = []kmsg.FetchRequestTopicPartition{p}
	r.Topics = []kmsg.FetchRequestTopic{t}
	return r
}

func asyncFetch(rm *ReplicaManager, r *kmsg.FetchRequest, member bool) <-chan *kmsg.FetchResponse {
	got := make(chan *kmsg.FetchResponse, 1)
	rm.fetch(r, member, func(resp kmsg.Response) { got <- resp.(*kmsg.FetchResponse) })
	return got
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		var zero T
		return zero
	}
}

// Produce answers each partition with Kafka's error codes: unknown topics
// by name and by id, a partition the topic lacks, one this broker only
// follows, and an acks value Kafka refuses; good batches get offsets.
func TestProduceErrorsAndOffsets(t *testing.T) {
	rm := replicaRig(t)
	for _, c := range []struct {
		name string
		req  *kmsg.ProduceRequest
		want int16
	}{
		{"unknown name", produceReq(12, 1, "nope", record.Uuid{}, 0, batch("a")), 3},
		{"unknown id", produceReq(13, 1, "", record.NewUuid(1, 1), 0, batch("a")), 100},
		{"missing partition", produceReq(12, 1, "led", record.Uuid{}, 4, batch("a")), 3},
		{"follower", produceReq(13, -1, "", followsID, 0, batch("a")), 6},
		{"acks=2", produceReq(12, 2, "led", record.Uuid{}, 0, batch("a")), 21},
		{"not a batch", produceReq(12, 1, "led", record.Uuid{}, 0, []byte("garbage")), -1},
	} {
		rp := syncProduce(t, rm, c.req)
		if (c.want < 0 && rp.ErrorCode == 0) || (c.want >= 0 && rp.ErrorCode != c.want) {
			t.Errorf("%s: error code %d, want %d", c.name, rp.ErrorCode, c.want)
		}
	}
	for i, want := range []int64{0, 2, 5} {
		rp := syncProduce(t, rm, produceReq(int16(12+i%2), -1, "led", ledID, 0, batch(make([]string, 2+i)...)))
		if rp.ErrorCode != 0 || rp.BaseOffset != want {
			t.Fatalf("produce %d: %+v, want base offset %d", i, rp, want)
		}
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 11
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "led"
	for _, ts := range []int64{partition.EarliestTimestamp, partition.LatestTimestamp} {
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Timestamp, p.CurrentLeaderEpoch = ts, -1
		lt.Partitions = append(lt.Partitions, p)
	}
	lo.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	ps := rm.listOffsets(lo, false).Topics[0].Partitions
	if ps[0].ErrorCode != 0 || ps[0].Offset != 0 || ps[1].ErrorCode != 0 || ps[1].Offset != 9 {
		t.Fatalf("ListOffsets earliest, latest = %+v", ps)
	}
	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.Version, oe.ReplicaID = 4, -1
	ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
	ot.Topic = "led"
	for _, epoch := range []int32{3, 2} {
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.CurrentLeaderEpoch, p.LeaderEpoch = 3, epoch
		ot.Partitions = append(ot.Partitions, p)
	}
	oe.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{ot}
	// Every batch is of leader epoch 3: it ends at the log end, and epoch
	// 2, below every epoch of the log, ends where epoch 3 starts (Kafka's
	// LeaderEpochFileCache.endOffsetFor).
	eps := rm.offsetForLeaderEpoch(oe).Topics[0].Partitions
	if eps[0].ErrorCode != 0 || eps[0].LeaderEpoch != 3 || eps[0].EndOffset != 9 || eps[1].ErrorCode != 0 || eps[1].LeaderEpoch != 2 || eps[1].EndOffset != 0 {
		t.Fatalf("OffsetForLeaderEpoch 3, 2 = %+v", eps)
	}
}

// An acks=all produce to a partition whose follower never fetches waits
// for the high watermark until its timeout: REQUEST_TIMED_OUT; with
// acks=1 it is answered at once, and a consumer does not see it until
// it is committed.
func TestAcksAllTimesOutWithoutTheFollower(t *testing.T) {
	rm := replicaRig(t)
	r := produceReq(13, -1, "", waitsID, 0, batch("a"))
	r.TimeoutMillis = 50
	if rp := syncProduce(t, rm, r); rp.ErrorCode != 7 || rp.BaseOffset != 0 { // REQUEST_TIMED_OUT
		t.Fatalf("acks=all without the follower answered %+v", rp)
	}
	if rp := syncProduce(t, rm, produceReq(13, 1, "", waitsID, 0, batch("b"))); rp.ErrorCode != 0 || rp.BaseOffset != 1 {
		t.Fatalf("acks=1 answered %+v", rp)
	}
	resp := wait(t, asyncFetch(rm, fetchReq(-1, waitsID, 0, 0, 0), false))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("a consumer read uncommitted records: %+v", p)
	}
	if n := rm.produces.Len(); n != 0 {
		t.Fatalf("%d produces left in purgatory", n)
	}
}

// A consumer's fetch at the log end waits in purgatory; a produce
// completes it with the new batch. One that finds nothing before its
// MaxWait is answered empty when the wait is over.
func TestFetchWaitsForProduce(t *testing.T) {
	rm := replicaRig(t)
	parked := asyncFetch(rm, fetchReq(-1, ledID, 0, 1, 30_000), false)
	waitFor(t, "the fetch in purgatory", func() bool { return rm.fetches.Len() == 1 })
	if rp := syncProduce(t, rm, produceReq(13, 1, "", ledID, 0, batch("a", "b"))); rp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", rp)
	}
	resp := wait(t, parked)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 2 {
		t.Fatalf("parked fetch answered %+v", p)
	}
	empty := wait(t, asyncFetch(rm, fetchReq(-1, ledID, 2, 1, 50), false))
	if p := empty.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("expired fetch answered %+v", p)
	}
	if n := rm.fetches.Len(); n != 0 {
		t.Fatalf("%d fetches left in purgatory", n)
	}
}

// A fetch claiming to be a replica is refused per partition unless its
// connection is a member; unknown topic ids and fetch sessions get
// Kafka's errors.
func TestFetchRefusals(t *testing.T) {
	rm := replicaRig(t)
	resp := wait(t, asyncFetch(rm, fetchReq(102, followsID, 0, 0, 0), false))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 29 { // TOPIC_AUTHORIZATION_FAILED
		t.Errorf("a stranger's replica fetch answered %+v", p)
	}
	resp = wait(t, asyncFetch(rm, fetchReq(-1, record.NewUuid(3, 3), 0, 0, 0), false))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 100 { // UNKNOWN_TOPIC_ID
		t.Errorf("an unknown topic id answered %+v", p)
	}
	resp = wait(t, asyncFetch(rm, fetchReq(-1, followsID, 0, 0, 0), false))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 6 { // NOT_LEADER_OR_FOLLOWER
		t.Errorf("a fetch from a follower answered %+v", p)
	}
	r := fetchReq(-1, ledID, 0, 0, 0)
	r.SessionID = 42
	if resp = wait(t, asyncFetch(rm, r, false)); resp.ErrorCode != 70 { // FETCH_SESSION_ID_NOT_FOUND
		t.Errorf("an unknown session answered %+v", resp)
	}
}

// A topic named like the metadata log is never hosted: its directory
// would be the metadata log's.
func TestNoReplicaInTheMetadataLogDirectory(t *testing.T) {
	rm := replicaRig(t)
	id := record.NewUuid(13, 14)
	d := image.NewMetadataDelta(rm.img.Load())
	for _, r := range []record.Record{
		&record.TopicRecord{Name: "__cluster_metadata", TopicID: id},
		&record.PartitionRecord{Version: record.PartitionVersion, TopicID: id, Replicas: []int32{101}, Isr: []int32{101}, Leader: 101,
			RemovingReplicas: []int32{}, AddingReplicas: []int32{}, Directories: make([]record.Uuid, 1)},
	} {
		if err := d.Replay(r); err != nil {
			t.Fatal(err)
		}
	}
	img := d.Apply(image.EmptyProvenance)
	rm.img.Store(img)
	rm.applyImage(img, time.Now())
	if rm.partitionByName("__cluster_metadata", 0) != nil {
		t.Fatal("hosted a replica in the metadata log's directory")
	}
	if _, err := os.Stat(filepath.Join(rm.dir, "__cluster_metadata-0")); !os.IsNotExist(err) {
		t.Fatalf("the directory was made: %v", err)
	}
	if rm.partitionByName("led", 0) == nil {
		t.Fatal("the other replicas are gone")
	}
}

// A fetch with nothing to return answers an empty record set, never a
// null one (Kafka's MemoryRecords.EMPTY): librdkafka's consumers refuse
// a null set ("invalid MessageSetSize -1") and stop consuming.
func TestEmptyFetchAnswersEmptyRecordsNotNull(t *testing.T) {
	rm := replicaRig(t)
	resp := wait(t, asyncFetch(rm, fetchReq(-1, waitsID, 0, 0, 0), false))
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.RecordBatches == nil {
		t.Fatalf("an empty fetch answered %+v (records nil: %v)", p, p.RecordBatches == nil)
	}
	// At a version without flexible encoding too, the set's size is 0.
	b := resp.AppendTo(nil)
	var back kmsg.FetchResponse
	back.Version = resp.Version
	if err := back.ReadFrom(b); err != nil || back.Topics[0].Partitions[0].RecordBatches == nil {
		t.Fatalf("decoded back: %v, records nil: %v", err, back.Topics[0].Partitions[0].RecordBatches == nil)
	}
}

// A follower's parked fetch is its acknowledgement when it arrives: the
// produce that wakes it does not record the follower's fetch again, as
// Kafka's DelayedFetch reads without updating the fetch state, so the
// follower counts as caught up only as of its arrival.
func TestParkedFollowerFetchIsRecordedOnce(t *testing.T) {
	rm := replicaRig(t)
	parked := asyncFetch(rm, fetchReq(102, waitsID, 0, 1, 30_000), true)
	waitFor(t, "the follower's fetch in purgatory", func() bool { return rm.fetches.Len() == 1 })
	lastFetch := func() time.Time {
		for _, f := range rm.partitionByName("waits", 0).State().Followers {
			if f.ReplicaID == 102 {
				return f.LastFetchTime
			}
		}
		t.Fatal("no follower 102")
		return time.Time{}
	}
	arrived := lastFetch()
	if arrived.IsZero() {
		t.Fatal("the parked fetch was not recorded when it arrived")
	}
	if rp := syncProduce(t, rm, produceReq(13, 1, "", waitsID, 0, batch("a"))); rp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", rp)
	}
	if p := wait(t, parked).Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Fatalf("parked fetch answered %+v", p)
	}
	if got := lastFetch(); !got.Equal(arrived) {
		t.Fatalf("the follower's last fetch moved from %v to %v when purgatory answered it", arrived, got)
	}
}
