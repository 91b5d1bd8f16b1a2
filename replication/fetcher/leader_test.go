package fetcher

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testLeader is an in-memory leader broker: it answers Fetch and
// ListOffsets from real logs, as a partition leader does, with long
// polling, DivergingEpoch and the errors a test injects.
type testLeader struct {
	id      int32
	fetches atomic.Int64
	held    atomic.Int64 // fetches that waited on hold
	// fetchVersion and listOffsetsVersion are the versions it accepts.
	fetchVersion, listOffsetsVersion int16

	mu      sync.Mutex
	parts   map[TopicPartition]*leaderPartition
	names   map[[16]byte]string
	changed chan struct{} // closed when any log grows
	block   map[TopicPartition]chan struct{}
	errs    map[TopicPartition]int16
}

type leaderPartition struct {
	log   *storage.Log
	epoch int32
	hwm   int64
}

func newTestLeader(id int32) *testLeader {
	return &testLeader{id: id, fetchVersion: DefaultFetchVersion, listOffsetsVersion: DefaultListOffsetsVersion, parts: map[TopicPartition]*leaderPartition{}, names: map[[16]byte]string{},
		changed: make(chan struct{}), block: map[TopicPartition]chan struct{}{}, errs: map[TopicPartition]int16{}}
}

func topicID(topic string) [16]byte {
	var id [16]byte
	copy(id[:], "id:"+topic)
	return id
}

func openLog(t *testing.T) *storage.Log {
	t.Helper()
	l, err := storage.Open(t.TempDir(), storage.Options{FlushPolicy: storage.FlushNever})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// lead makes the leader lead tp in epoch with log.
func (l *testLeader) lead(tp TopicPartition, epoch int32, log *storage.Log) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parts[tp] = &leaderPartition{log: log, epoch: epoch}
	l.names[topicID(tp.Topic)] = tp.Topic
}

// produce appends n one-record batches in the partition's epoch.
func (l *testLeader) produce(t *testing.T, tp TopicPartition, n int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	appendRecords(t, p.log, p.epoch, n)
	close(l.changed)
	l.changed = make(chan struct{})
}

func appendRecords(t *testing.T, log *storage.Log, epoch int32, n int) {
	t.Helper()
	for i := range n {
		rec := storage.Record{Key: fmt.Appendf(nil, "k%d", log.LogEndOffset()), Value: fmt.Appendf(nil, "value %d in epoch %d", i, epoch)}
		if _, _, err := log.AppendAsLeader([]storage.Record{rec}, epoch, 1700000000000); err != nil {
			t.Fatal(err)
		}
	}
}

func (l *testLeader) setError(tp TopicPartition, code int16) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs[tp] = code
}

// hold makes fetches that include tp wait until the returned func runs.
func (l *testLeader) hold(tp TopicPartition) (release func()) {
	ch := make(chan struct{})
	l.mu.Lock()
	l.block[tp] = ch
	l.mu.Unlock()
	return sync.OnceFunc(func() {
		l.mu.Lock()
		delete(l.block, tp)
		l.mu.Unlock()
		close(ch)
	})
}

func (l *testLeader) handle(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		return l.fetch(ctx, r)
	case *kmsg.ListOffsetsRequest:
		if r.Version != l.listOffsetsVersion {
			return nil, fmt.Errorf("test leader: ListOffsets v%d, want v%d", r.Version, l.listOffsetsVersion)
		}
		return l.listOffsets(r), nil
	}
	return nil, fmt.Errorf("test leader: unexpected %T", req)
}

func (l *testLeader) fetch(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error) {
	l.fetches.Add(1)
	if req.Version != l.fetchVersion || req.ReplicaState.ID < 0 || req.SessionEpoch != -1 {
		return nil, fmt.Errorf("test leader: not a replica's sessionless fetch v%d: %+v", l.fetchVersion, req)
	}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			l.mu.Lock()
			ch := l.block[TopicPartition{l.names[rt.TopicID], rp.Partition}]
			l.mu.Unlock()
			if ch != nil {
				l.held.Add(1)
				select {
				case <-ch:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
	}
	timer := time.NewTimer(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	defer timer.Stop()
	for {
		l.mu.Lock()
		resp, bytes, urgent := l.answer(req)
		changed := l.changed
		l.mu.Unlock()
		if urgent || bytes >= int(req.MinBytes) {
			return resp, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return resp, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// answer builds the response; urgent means it holds an error or a
// divergence, which a leader answers at once.
func (l *testLeader) answer(req *kmsg.FetchRequest) (*kmsg.FetchResponse, int, bool) {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = req.Version
	bytes, urgent := 0, false
	for _, rt := range req.Topics {
		ot := kmsg.NewFetchResponseTopic()
		ot.TopicID = rt.TopicID
		for _, rp := range rt.Partitions {
			op := kmsg.NewFetchResponseTopicPartition()
			op.Partition = rp.Partition
			tp := TopicPartition{l.names[rt.TopicID], rp.Partition}
			op.ErrorCode = l.partitionAnswer(tp, rp, &op)
			urgent = urgent || op.ErrorCode != 0 || op.DivergingEpoch.Epoch >= 0
			bytes += len(op.RecordBatches)
			ot.Partitions = append(ot.Partitions, op)
		}
		resp.Topics = append(resp.Topics, ot)
	}
	return resp, bytes, urgent
}

func (l *testLeader) partitionAnswer(tp TopicPartition, rp kmsg.FetchRequestTopicPartition, op *kmsg.FetchResponseTopicPartition) int16 {
	p, ok := l.parts[tp]
	if !ok {
		return kerr.UnknownTopicID.Code
	}
	if code := l.errs[tp]; code != 0 {
		return code
	}
	switch {
	case rp.CurrentLeaderEpoch < p.epoch:
		return kerr.FencedLeaderEpoch.Code
	case rp.CurrentLeaderEpoch > p.epoch:
		return kerr.UnknownLeaderEpoch.Code
	}
	op.LogStartOffset = p.log.LogStartOffset()
	// Kafka's Partition.readRecords: an epoch the leader cannot place, or
	// an offset below its start, is out of range before any divergence.
	if rp.LastFetchedEpoch >= 0 {
		epoch, end := p.log.EndOffsetForEpoch(rp.LastFetchedEpoch)
		if epoch < 0 || rp.FetchOffset < p.log.LogStartOffset() {
			return kerr.OffsetOutOfRange.Code
		}
		if epoch < rp.LastFetchedEpoch || end < rp.FetchOffset {
			op.DivergingEpoch.Epoch, op.DivergingEpoch.EndOffset = epoch, end
			op.HighWatermark = p.hwm
			return 0
		}
	}
	if rp.FetchOffset < p.log.LogStartOffset() || rp.FetchOffset > p.log.LogEndOffset() {
		return kerr.OffsetOutOfRange.Code
	}
	// One follower: the high watermark is the lower of the two log ends,
	// and the fetch offset is the follower's.
	p.hwm = max(p.hwm, min(rp.FetchOffset, p.log.LogEndOffset()))
	op.HighWatermark = p.hwm
	data, err := p.log.Read(rp.FetchOffset, int(rp.PartitionMaxBytes))
	if err != nil {
		return kerr.OffsetOutOfRange.Code
	}
	op.RecordBatches = data
	return 0
}

func (l *testLeader) listOffsets(req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	l.mu.Lock()
	defer l.mu.Unlock()
	resp := kmsg.NewPtrListOffsetsResponse()
	resp.Version = req.Version
	for _, rt := range req.Topics {
		ot := kmsg.NewListOffsetsResponseTopic()
		ot.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			op := kmsg.NewListOffsetsResponseTopicPartition()
			op.Partition = rp.Partition
			p, ok := l.parts[TopicPartition{rt.Topic, rp.Partition}]
			switch {
			case !ok:
				op.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case rp.CurrentLeaderEpoch < p.epoch:
				op.ErrorCode = kerr.FencedLeaderEpoch.Code
			case rp.Timestamp == EarliestTimestamp:
				op.Offset, op.LeaderEpoch = p.log.LogStartOffset(), p.epoch
			default:
				op.Offset, op.LeaderEpoch = p.log.LogEndOffset(), p.epoch
			}
			ot.Partitions = append(ot.Partitions, op)
		}
		resp.Topics = append(resp.Topics, ot)
	}
	return resp
}

// network routes requests to test leaders by broker id.
type network map[int32]*testLeader

func (n network) send(ctx context.Context, to int32, req kmsg.Request) (kmsg.Response, error) {
	l, ok := n[to]
	if !ok {
		return nil, fmt.Errorf("broker %d: connection refused", to)
	}
	return l.handle(ctx, req)
}

// followerLog is the follower's replica: a real log and a high watermark.
type followerLog struct {
	mu  sync.Mutex
	log *storage.Log
	hwm int64
}

func newFollower(t *testing.T) *followerLog { return &followerLog{log: openLog(t)} }

func (f *followerLog) LogEndOffset() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.LogEndOffset()
}

func (f *followerLog) LastFetchedEpoch() int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.LastEpoch()
}

func (f *followerLog) EndOffsetForEpoch(epoch int32) (int64, int32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, end := f.log.EndOffsetForEpoch(epoch)
	return end, e, e >= 0
}

func (f *followerLog) AppendAsFollower(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.AppendAsFollower(b)
}

// Flush takes no lock of the fake's: the storage log guards itself, and
// the thread calls Flush while the replica's other methods may run.
func (f *followerLog) Flush() error { return f.log.Flush() }

func (f *followerLog) TruncateTo(offset int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hwm = min(f.hwm, offset)
	return f.log.TruncateTo(offset)
}

func (f *followerLog) TruncateFullyAndStartAt(offset int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hwm = offset
	return f.log.TruncateFullyAndStartAt(offset)
}

func (f *followerLog) UpdateHighWatermark(hwm int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hwm = min(hwm, f.log.LogEndOffset())
}

func (f *followerLog) LogStartOffset() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.LogStartOffset()
}

func (f *followerLog) highWatermark() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hwm
}

func (f *followerLog) bytes(t *testing.T) []byte {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	return readAll(t, f.log)
}

func readAll(t testing.TB, log *storage.Log) []byte {
	t.Helper()
	var out []byte
	for off := log.LogStartOffset(); off < log.LogEndOffset(); {
		b, err := log.Read(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var last int64
		err = storage.Batches(b, func(_ int, batch *storage.Batch) error { last = batch.LastOffset(); return nil })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
		off = last + 1
	}
	return out
}

func newManager(t *testing.T, net network, cfg Config) *Manager {
	t.Helper()
	cfg.BrokerID, cfg.Send = 201, net.send
	if cfg.FetchWaitMax == 0 {
		cfg.FetchWaitMax = 200 * time.Millisecond
	}
	if cfg.FetchBackoff == 0 {
		cfg.FetchBackoff = 50 * time.Millisecond
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func eventually(t *testing.T, what string, cond func() bool, describe ...func() string) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, cond, describe...)
}

// caughtUp: the follower holds the leader's log byte for byte and has its
// whole log under the high watermark.
func caughtUp(t *testing.T, l *testLeader, tp TopicPartition, f *followerLog) bool {
	l.mu.Lock()
	end := l.parts[tp].log.LogEndOffset()
	l.mu.Unlock()
	return f.LogEndOffset() == end && f.highWatermark() == end
}

func leaderBytes(t *testing.T, l *testLeader, tp TopicPartition) []byte {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	return readAll(t, l.parts[tp].log)
}

func statsOf(m *Manager) func() string {
	return func() string { return fmt.Sprintf("%+v", m.Stats()) }
}
