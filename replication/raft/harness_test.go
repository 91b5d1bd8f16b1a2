package raft_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness runs a few nodes with a clock and a network the test controls:
// messages are delivered at once, in order, unless the test cuts a link or
// holds them; the log is flushed after every step unless manualFlush.
type harness struct {
	t           *testing.T
	now         time.Time
	ids         []int32
	voters      []int32
	nodes       map[int32]*hnode
	queue       []raft.Message
	cut         map[[2]int32]bool
	manualFlush bool
	config      func(id int32) raft.Config
	// fakes are nodes the test plays: their messages wait in the queue.
	fakes []int32
	// delivered sees every message handed to a node.
	delivered func(raft.Message)
	// unsafe is the ErrUnsafe error of the last request, nil for none.
	unsafe error
	// ports, when set, moves a node's listener (newDescribingHarness).
	ports map[int32]uint16
}

type hnode struct {
	n     *raft.Node
	log   *raft.MemoryLog
	store *raft.MemoryQuorumStateStore
	l     *recorder
}

// recorder is a listener that remembers what it was handed.
type recorder struct {
	values    map[int64]string // committed data records by offset
	next      int64
	snapshots []raft.Snapshot
	leaders   []raft.LeaderAndEpoch
}

func (r *recorder) HandleCommit(batches []storage.Batch) {
	if r.values == nil {
		r.next = batches[len(batches)-1].NextOffset()
		return
	}
	for i := range batches {
		recs, err := batches[i].Records()
		if err != nil {
			panic(err)
		}
		if !batches[i].IsControl() {
			for _, rec := range recs {
				r.values[rec.Offset] = string(rec.Value)
			}
		}
		r.next = batches[i].NextOffset()
	}
}

func (r *recorder) HandleLoadSnapshot(s raft.Snapshot) {
	r.snapshots = append(r.snapshots, s)
	r.next = s.ID.EndOffset
}

func (r *recorder) HandleLeaderChange(l raft.LeaderAndEpoch) { r.leaders = append(r.leaders, l) }

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// newHarness starts voters and observers, except the fakes, which the test
// plays. The first voter has a 100ms election timeout and the others 10s, so
// it is the first to stand.
func newHarness(t *testing.T, voters, observers []int32, fakes ...int32) *harness {
	t.Helper()
	h := &harness{
		t:      t,
		now:    t0,
		voters: voters,
		ids:    append(slices.Clone(voters), observers...),
		nodes:  make(map[int32]*hnode),
		cut:    make(map[[2]int32]bool),
		fakes:  fakes,
	}
	h.config = func(id int32) raft.Config {
		c := raft.DefaultConfig()
		c.NodeID, c.Voters, c.ClusterID = id, voters, "cluster"
		if id != voters[0] {
			c.ElectionTimeout = 10 * time.Second
		} else {
			c.ElectionTimeout = 100 * time.Millisecond
		}
		return c
	}
	for _, id := range h.ids {
		h.nodes[id] = &hnode{log: raft.NewMemoryLog(), store: &raft.MemoryQuorumStateStore{}}
		if !slices.Contains(fakes, id) {
			h.start(id)
		}
	}
	return h
}

// start (re)creates a node from its log and quorum state.
func (h *harness) start(id int32) {
	h.t.Helper()
	hn := h.nodes[id]
	hn.l = &recorder{values: map[int64]string{}}
	n, err := raft.New(h.config(id), hn.log, hn.store, hn.l, rand.New(rand.NewPCG(uint64(id), 1)), h.now)
	if err != nil {
		h.t.Fatalf("start node %d: %v", id, err)
	}
	hn.n = n
	h.collect(id)
}

// crash stops a node as a process death does: unflushed records are lost
// and its queued messages vanish.
func (h *harness) crash(id int32) {
	h.nodes[id].n = nil
	h.nodes[id].log.Crash()
	h.queue = slices.DeleteFunc(h.queue, func(m raft.Message) bool { return m.To == id || m.From == id })
}

func (h *harness) node(id int32) *raft.Node { return h.nodes[id].n }

func (h *harness) status(id int32) raft.Status { return h.nodes[id].n.Status() }

// collect moves a node's outbox onto the network and flushes its log.
func (h *harness) collect(id int32) {
	h.t.Helper()
	n := h.nodes[id].n
	for _, m := range n.Outbox() {
		if !h.cut[[2]int32{m.From, m.To}] {
			h.queue = append(h.queue, m)
		}
	}
	if !h.manualFlush && n.NeedsFlush() {
		h.flush(id)
	}
}

func (h *harness) flush(id int32) {
	h.t.Helper()
	hn := h.nodes[id]
	if err := hn.log.Flush(); err != nil {
		h.t.Fatal(err)
	}
	if err := hn.n.Flushed(h.now); err != nil {
		h.t.Fatalf("node %d flushed: %v", id, err)
	}
	h.collect(id)
}

// isolate cuts a node off from everyone, both ways; heal undoes all cuts.
func (h *harness) isolate(id int32) {
	for _, o := range h.ids {
		h.cut[[2]int32{id, o}], h.cut[[2]int32{o, id}] = true, true
	}
	h.queue = slices.DeleteFunc(h.queue, func(m raft.Message) bool { return m.To == id || m.From == id })
}

func (h *harness) heal() { clear(h.cut) }

// deliver hands queued messages matching pred to their nodes, in order,
// including the ones their handling produces, and returns how many.
func (h *harness) deliver(pred func(raft.Message) bool) int {
	h.t.Helper()
	count := 0
	for i := 0; i < len(h.queue); {
		m := h.queue[i]
		if pred != nil && !pred(m) {
			i++
			continue
		}
		if slices.Contains(h.fakes, m.To) {
			i++
			continue
		}
		h.queue = slices.Delete(h.queue, i, i+1)
		if count++; count > 100000 {
			h.t.Fatal("messages never stop")
		}
		hn := h.nodes[m.To]
		if hn == nil || hn.n == nil || h.cut[[2]int32{m.From, m.To}] {
			continue
		}
		if h.delivered != nil {
			h.delivered(m)
		}
		if err := hn.n.Step(h.now, m); err != nil {
			h.t.Fatalf("node %d step %v: %v", m.To, m, err)
		}
		h.collect(m.To)
		i = 0
	}
	return count
}

func (h *harness) stabilize() { h.t.Helper(); h.deliver(nil) }

// advance moves the clock by d, firing timers as they fall due and
// delivering messages as soon as they are sent.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	end := h.now.Add(d)
	for {
		h.stabilize()
		var next time.Time
		var who int32
		for _, id := range h.ids {
			if n := h.nodes[id].n; n != nil && !slices.Contains(h.fakes, id) {
				if dl := n.NextDeadline(); !dl.IsZero() && (next.IsZero() || dl.Before(next)) {
					next, who = dl, id
				}
			}
		}
		if next.IsZero() || next.After(end) {
			h.now = end
			return
		}
		h.now = next
		if err := h.node(who).Tick(h.now); err != nil {
			h.t.Fatalf("node %d tick: %v", who, err)
		}
		h.collect(who)
	}
}

// elect runs the clock until id leads, and everyone has heard of it.
func (h *harness) elect(id int32) {
	h.t.Helper()
	for range 100 {
		if st := h.status(id); st.Role == raft.Leader && st.HighWatermark >= 0 {
			h.advance(time.Second)
			return
		}
		h.advance(50 * time.Millisecond)
	}
	h.t.Fatalf("node %d not elected: %+v", id, h.status(id))
}

func (h *harness) append(id int32, values ...string) int64 {
	h.t.Helper()
	recs := make([][]byte, len(values))
	for i, v := range values {
		recs[i] = []byte(v)
	}
	off, err := h.node(id).Append(h.now, h.status(id).Epoch, recs)
	if err != nil {
		h.t.Fatalf("append on node %d: %v", id, err)
	}
	h.collect(id)
	return off
}

func (h *harness) expectRole(id int32, role raft.Role, epoch int32) {
	h.t.Helper()
	if st := h.status(id); st.Role != role || st.Epoch != epoch {
		h.t.Fatalf("node %d is %v in epoch %d, want %v in epoch %d", id, st.Role, st.Epoch, role, epoch)
	}
}

// request sends a request from a client (or a peer the test plays) and
// returns the node's immediate answer, nil if it parked the request.
func (h *harness) request(to, from int32, req kmsg.Request) kmsg.Response {
	h.t.Helper()
	id := uint64(1 << 40)
	h.unsafe = nil
	if err := h.node(to).Step(h.now, raft.Message{From: from, To: to, ID: id, Request: req}); errors.Is(err, raft.ErrUnsafe) {
		h.unsafe = err
	} else if err != nil {
		h.t.Fatalf("node %d: %v", to, err)
	}
	var resp kmsg.Response
	for _, m := range h.node(to).Outbox() {
		if m.Response != nil && m.ID == id && m.To == from {
			resp = m.Response
		} else {
			h.queue = append(h.queue, m)
		}
	}
	return resp
}

func isKind(key int16) func(raft.Message) bool {
	return func(m raft.Message) bool {
		return (m.Request != nil && m.Request.Key() == key) || (m.Response != nil && m.Response.Key() == key)
	}
}

func (h *harness) pending(pred func(raft.Message) bool) []raft.Message {
	var out []raft.Message
	for _, m := range h.queue {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

func logString(l *raft.MemoryLog) string {
	var s string
	off := l.LogStartOffset()
	for off < l.LogEndOffset() {
		data, err := l.Read(off, 1<<20)
		if err != nil {
			return err.Error()
		}
		_ = storage.Batches(data, func(_ int, b *storage.Batch) error {
			s += fmt.Sprintf("[%d-%d e%d]", b.FirstOffset, b.LastOffset(), b.PartitionLeaderEpoch)
			off = b.NextOffset()
			return nil
		})
	}
	return s
}

// take removes and returns the queued messages matching pred.
func (h *harness) take(pred func(raft.Message) bool) []raft.Message {
	var out []raft.Message
	h.queue = slices.DeleteFunc(h.queue, func(m raft.Message) bool {
		if pred(m) {
			out = append(out, m)
			return true
		}
		return false
	})
	return out
}

// answer delivers a fake node's response to a request a real node sent it.
func (h *harness) answer(req raft.Message, resp kmsg.Response) {
	h.t.Helper()
	if err := h.node(req.From).Step(h.now, raft.Message{From: req.To, To: req.From, ID: req.ID, Response: resp}); err != nil {
		h.t.Fatalf("node %d: %v", req.From, err)
	}
	h.collect(req.From)
}

func to(id int32, key int16) func(raft.Message) bool {
	return func(m raft.Message) bool { return m.To == id && isKind(key)(m) }
}

// voteResponse answers a Vote request as a voter in epoch.
func voteResponse(req raft.Message, epoch, leader int32, granted bool) *kmsg.VoteResponse {
	resp := req.Request.(*kmsg.VoteRequest).ResponseKind().(*kmsg.VoteResponse)
	p := kmsg.NewVoteResponseTopicPartition()
	p.LeaderEpoch, p.LeaderID, p.VoteGranted = epoch, leader, granted
	t := kmsg.NewVoteResponseTopic()
	t.Topic = raft.MetadataTopic
	t.Partitions = []kmsg.VoteResponseTopicPartition{p}
	resp.Topics = []kmsg.VoteResponseTopic{t}
	return resp
}

// winElection plays the fake voters so that node id wins the next election.
func (h *harness) winElection(id int32) {
	h.t.Helper()
	for range 100 {
		h.advance(50 * time.Millisecond)
		for _, m := range h.take(isKind(kmsg.Vote.Int16())) {
			if m.Request != nil && m.From == id {
				p := m.Request.(*kmsg.VoteRequest).Topics[0].Partitions[0]
				h.answer(m, voteResponse(m, p.CandidateEpoch, -1, true))
			}
		}
		if h.status(id).Role == raft.Leader {
			h.take(isKind(kmsg.BeginQuorumEpoch.Int16()))
			return
		}
	}
	h.t.Fatalf("node %d did not win: %+v", id, h.status(id))
}

func fetchRequest(replica, epoch int32, offset int64, lastEpoch int32, maxWaitMs int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = raft.FetchVersion
	cluster := "cluster"
	req.ClusterID = &cluster
	req.ReplicaState.ID = replica
	req.MaxWaitMillis = maxWaitMs
	req.MaxBytes = 1 << 20
	p := kmsg.NewFetchRequestTopicPartition()
	p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch = epoch, offset, lastEpoch
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = raft.MetadataTopicID
	t.Partitions = []kmsg.FetchRequestTopicPartition{p}
	req.Topics = []kmsg.FetchRequestTopic{t}
	return req
}

func fetchPart(t *testing.T, resp kmsg.Response) kmsg.FetchResponseTopicPartition {
	t.Helper()
	r, ok := resp.(*kmsg.FetchResponse)
	if !ok || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("not a one-partition fetch response: %+v", resp)
	}
	return r.Topics[0].Partitions[0]
}

// leaderBatch appends a batch of values to a log at offset base in epoch, as
// a leader would.
func leaderBatch(t *testing.T, l *raft.MemoryLog, base int64, epoch int32, values ...string) {
	t.Helper()
	recs := make([]storage.Record, len(values))
	for i, v := range values {
		recs[i].Value = []byte(v)
	}
	if b, _, err := l.AppendAsLeader(recs, epoch, 0); err != nil || b != base {
		t.Fatalf("append at %d: base %d, %v", base, b, err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
}
