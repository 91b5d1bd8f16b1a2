package group

import (
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memLog is one offsets partition in memory: appends are committed at
// once (answered on another goroutine) unless fail is set, which answers
// at once on the caller's; the high watermark may be held back.
type memLog struct {
	mu      sync.Mutex
	batches [][]byte
	end     int64
	hwm     int64 // -1: the log end
	fail    int16
}

func newMemLog() *memLog { return &memLog{hwm: -1} }

func (l *memLog) Append(_ int32, recs []storage.Record, done func(int64, int16)) {
	l.mu.Lock()
	if l.fail != 0 {
		code := l.fail
		l.mu.Unlock()
		done(-1, code)
		return
	}
	base := l.end
	l.batches = append(l.batches, storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: base, Timestamp: 1}, recs))
	l.end += int64(len(recs))
	l.mu.Unlock()
	go done(base, 0)
}

func (l *memLog) highWatermark() int64 {
	if l.hwm < 0 {
		return l.end
	}
	return l.hwm
}

func (l *memLog) Read(_ int32, offset int64) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	for _, b := range l.batches {
		_, last, _, _, err := storage.PeekBatch(b)
		if err != nil {
			return nil, err
		}
		if last >= offset && last < l.highWatermark() {
			out = append(out, b...)
		}
	}
	return out, nil
}

func (l *memLog) Bounds(int32) (int64, int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return 0, l.highWatermark(), l.end, nil
}

func newTestCoordinator(l *memLog) *Coordinator {
	return New(Config{Log: l, NumPartitions: func() int32 { return 1 }})
}

// loaded waits until c serves partition 0.
func loaded(t *testing.T, c *Coordinator) {
	t.Helper()
	poll.Until(t, 10*time.Second, "the shard loaded", func() bool {
		s, code := c.shardFor("g")
		if code != 0 {
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.loaded
	})
}

// await returns what answer got.
func await(t *testing.T, ch <-chan kmsg.Response) kmsg.Response {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

func answerTo() (chan kmsg.Response, func(kmsg.Response)) {
	ch := make(chan kmsg.Response, 4)
	return ch, func(r kmsg.Response) { ch <- r }
}

func commitReq(group string, gen int32, member string, offset int64) *kmsg.OffsetCommitRequest {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.Generation, r.MemberID = 8, group, gen, member
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = "orders"
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	p.Offset, p.LeaderEpoch = offset, 3
	t.Partitions = []kmsg.OffsetCommitRequestTopicPartition{p}
	r.Topics = []kmsg.OffsetCommitRequestTopic{t}
	return r
}

// A coordinator writes a group's metadata and offsets to its partition;
// once it resigns it answers NOT_COORDINATOR, and another coordinator
// that loads the partition serves the same group, Stable with its
// member and assignment, and the same offsets.
func TestCoordinatorLoadsWhatAnotherWrote(t *testing.T) {
	l := newMemLog()
	c1 := newTestCoordinator(l)
	defer c1.Close()
	c1.Elect(map[int32]int32{0: 1})
	loaded(t, c1)

	ch, answer := answerTo()
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis, j.ProtocolType = 3, "g", 30000, 30000, "consumer"
	jp := kmsg.NewJoinGroupRequestProtocol()
	jp.Name, jp.Metadata = "range", []byte{1}
	j.Protocols = []kmsg.JoinGroupRequestProtocol{jp}
	c1.joinGroup(j, "client", "/127.0.0.1", answer)
	jr := await(t, ch).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != 0 || jr.Generation != 1 || jr.LeaderID != jr.MemberID {
		t.Fatalf("join: %+v", jr)
	}
	s := kmsg.NewPtrSyncGroupRequest()
	s.Group, s.Generation, s.MemberID = "g", 1, jr.MemberID
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = jr.MemberID, []byte("assigned")
	s.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{a}
	c1.syncGroup(s, answer)
	if sr := await(t, ch).(*kmsg.SyncGroupResponse); sr.ErrorCode != 0 || string(sr.MemberAssignment) != "assigned" {
		t.Fatalf("sync: %+v", sr)
	}
	c1.offsetCommit(commitReq("g", 1, jr.MemberID, 42), answer)
	if cr := await(t, ch).(*kmsg.OffsetCommitResponse); cr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("commit: %+v", cr)
	}

	c1.Elect(nil)
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.Generation, hb.MemberID = "g", 1, jr.MemberID
	c1.heartbeat(hb, answer)
	if r := await(t, ch).(*kmsg.HeartbeatResponse); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat after resigning: %+v", r)
	}

	c2 := newTestCoordinator(l)
	defer c2.Close()
	c2.Elect(map[int32]int32{0: 2})
	loaded(t, c2)
	c2.heartbeat(hb, answer)
	if r := await(t, ch).(*kmsg.HeartbeatResponse); r.ErrorCode != 0 {
		t.Fatalf("heartbeat to the new coordinator: %+v", r)
	}
	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Groups = []string{"g"}
	c2.describeGroups(d, answer)
	dg := await(t, ch).(*kmsg.DescribeGroupsResponse).Groups[0]
	if dg.State != "Stable" || dg.Protocol != "range" || len(dg.Members) != 1 || string(dg.Members[0].MemberAssignment) != "assigned" {
		t.Fatalf("loaded group: %+v", dg)
	}
	f := kmsg.NewPtrOffsetFetchRequest()
	f.Version, f.Group = 7, "g"
	c2.offsetFetch(f, answer)
	fr := await(t, ch).(*kmsg.OffsetFetchResponse)
	if fr.ErrorCode != 0 || len(fr.Topics) != 1 || fr.Topics[0].Partitions[0].Offset != 42 || fr.Topics[0].Partitions[0].LeaderEpoch != 3 {
		t.Fatalf("loaded offsets: %+v", fr)
	}
}

// A load waits for the high watermark to reach the log end it found:
// meanwhile the partition's groups are COORDINATOR_LOAD_IN_PROGRESS.
func TestCoordinatorLoadWaitsForTheHighWatermark(t *testing.T) {
	l := newMemLog()
	c1 := newTestCoordinator(l)
	c1.Elect(map[int32]int32{0: 1})
	loaded(t, c1)
	ch, answer := answerTo()
	c1.offsetCommit(commitReq("g", -1, "", 7), answer)
	await(t, ch)
	c1.Close()

	l.mu.Lock()
	l.hwm = 0
	l.mu.Unlock()
	c2 := newTestCoordinator(l)
	defer c2.Close()
	c2.Elect(map[int32]int32{0: 2})
	f := kmsg.NewPtrOffsetFetchRequest()
	f.Version, f.Group = 7, "g"
	c2.offsetFetch(f, answer)
	if fr := await(t, ch).(*kmsg.OffsetFetchResponse); fr.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("fetch while loading: %+v", fr)
	}
	l.mu.Lock()
	l.hwm = -1
	l.mu.Unlock()
	loaded(t, c2)
	c2.offsetFetch(f, answer)
	if fr := await(t, ch).(*kmsg.OffsetFetchResponse); fr.ErrorCode != 0 || fr.Topics[0].Partitions[0].Offset != 7 {
		t.Fatalf("fetch once loaded: %+v", fr)
	}
}

// An append that fails at once (the partition moved) answers on the
// caller's goroutine: the commit is NOT_COORDINATOR, the leader's
// SyncGroup too, and the group rebalances; nothing deadlocks.
func TestCoordinatorAppendFailingAtOnce(t *testing.T) {
	l := newMemLog()
	c := newTestCoordinator(l)
	defer c.Close()
	c.Elect(map[int32]int32{0: 1})
	loaded(t, c)
	l.mu.Lock()
	l.fail = kerr.NotLeaderForPartition.Code
	l.mu.Unlock()
	ch, answer := answerTo()
	c.offsetCommit(commitReq("g", -1, "", 7), answer)
	if cr := await(t, ch).(*kmsg.OffsetCommitResponse); cr.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("commit: %+v", cr)
	}
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis, j.ProtocolType = 3, "h", 30000, 30000, "consumer"
	jp := kmsg.NewJoinGroupRequestProtocol()
	jp.Name = "range"
	j.Protocols = []kmsg.JoinGroupRequestProtocol{jp}
	c.joinGroup(j, "client", "/127.0.0.1", answer)
	jr := await(t, ch).(*kmsg.JoinGroupResponse)
	s := kmsg.NewPtrSyncGroupRequest()
	s.Group, s.Generation, s.MemberID = "h", jr.Generation, jr.MemberID
	c.syncGroup(s, answer)
	if sr := await(t, ch).(*kmsg.SyncGroupResponse); sr.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("sync: %+v", sr)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.Generation, hb.MemberID = "h", jr.Generation, jr.MemberID
	c.heartbeat(hb, answer)
	if r := await(t, ch).(*kmsg.HeartbeatResponse); r.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after the failed store: %+v", r)
	}
}
