package raft_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTranscripts runs the protocol stories of testdata/: one node under
// test, every other node played by the script, one message per line. Rewrite
// the expected outputs with
//
//	go test ./replication/raft/ -run TestTranscripts -rewrite
//
// The command language:
//
//	start id=N voters=(1,2,3) [log=(1,1,2)] [snapshot=(endOffset=E epoch=P)]
//	      [epoch=E leader=L voted=V] [manual-flush] [electionTimeout=1s ...]
//	      [push] [maxInflight=N]
//	    starts the node from a log (one record per batch, the list giving
//	    each record's epoch, from the snapshot's end or 0) and a quorum-state
//	    file. A node id outside voters is an observer. push runs push
//	    replication.
//	step A->B API [response] field=value...
//	    hands the node a request from A, or the response to the oldest request
//	    it sent to A of that API (see printMessage for the fields).
//	fail A->B API      the node's oldest request to B of that API fails.
//	tick D | tick deadline    runs the clock D (firing timers when due), or to
//	                   the node's next deadline.
//	flush              the driver flushed the log (with manual-flush).
//	append v...        the leader appends records.
//	elect              plays the other voters: grants every pre-vote and vote
//	                   until the node leads; drops its BeginQuorumEpochs and
//	                   keeps its pushes unprinted, to be answered.
//	resign | shutdown | snapshot end=N
//	state | events | outbox | timer | quorum-state | log | replicas
//
// After every command that gives the node something it prints what the node
// sent, the events it queued and its state.
func TestTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &script{t: t}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			s.t = t
			return s.run(d)
		})
	})
}

type script struct {
	t           *testing.T
	now         time.Time
	cfg         raft.Config
	node        *raft.Node
	log         *raft.MemoryLog
	store       *raft.MemoryQuorumStateStore
	rec         *recorder
	manualFlush bool
	// holdOutbox: commands leave the outbox untaken until "outbox", as a
	// driver that steps several messages before it sends.
	holdOutbox bool
	nextID     uint64
	// sent holds the requests the node sent that have no answer yet.
	sent []raft.Message
	// held are messages the node produced that a command did not print yet.
	out []string
}

func (s *script) fatalf(d *datadriven.TestData, format string, args ...any) {
	s.t.Helper()
	d.Fatalf(s.t, format, args...)
}

func (s *script) run(d *datadriven.TestData) string {
	s.t.Helper()
	switch d.Cmd {
	case "start":
		s.start(d)
	case "step":
		s.step(d)
	case "fail":
		from, to, api := s.route(d)
		req := s.pending(d, to, from, api, true)
		s.must(d, s.node.Step(s.now, raft.Message{From: from, To: to, ID: req.ID, Err: errors.New("request failed")}))
	case "tick":
		s.tick(d)
	case "flush":
		s.must(d, s.log.Flush())
		s.must(d, s.node.Flushed(s.now))
	case "append":
		var recs [][]byte
		for _, a := range d.CmdArgs {
			recs = append(recs, []byte(a.Key))
		}
		off, err := s.node.Append(s.now, s.node.Status().Epoch, recs)
		if err != nil {
			s.out = append(s.out, "append: "+err.Error())
		} else {
			s.out = append(s.out, fmt.Sprintf("append: last offset %d", off))
		}
	case "elect":
		s.elect(d)
	case "resign":
		if err := s.node.Resign(s.now, s.node.Status().Epoch); err != nil {
			s.out = append(s.out, "resign: "+err.Error())
		}
	case "shutdown":
		s.must(d, s.node.Shutdown(s.now))
	case "snapshot":
		var end int64
		d.ScanArgs(s.t, "end", &end)
		if err := s.node.CreateSnapshot(s.now, end, [][]byte{[]byte("state")}); err != nil {
			s.out = append(s.out, "snapshot: "+err.Error())
		}
	case "state":
		return s.stateLine() + "\n"
	case "events":
		return orNone(s.events())
	case "hold":
		s.holdOutbox = true
	case "outbox":
		s.holdOutbox = false
		return orNone(s.collect())
	case "timer":
		dl := s.node.NextDeadline()
		if dl.IsZero() {
			return "timer: none\n"
		}
		return fmt.Sprintf("timer: +%v\n", dl.Sub(s.now))
	case "quorum-state":
		st, err := s.store.Read()
		s.must(d, err)
		return fmt.Sprintf("quorum-state: epoch=%d leaderId=%d votedId=%d voters=%v\n", st.Epoch, st.LeaderID, st.VotedID, st.Voters)
	case "log":
		return s.logLine() + "\n"
	case "replicas":
		var lines []string
		for _, r := range s.node.Replicas() {
			lines = append(lines, fmt.Sprintf("replica %d voter=%v leo=%d parked=%v", r.NodeID, r.Voter, r.LogEndOffset, r.FetchParked))
		}
		return strings.Join(lines, "\n") + "\n"
	default:
		s.fatalf(d, "unknown command %q", d.Cmd)
	}
	return s.report()
}

func (s *script) must(d *datadriven.TestData, err error) {
	s.t.Helper()
	if errors.Is(err, raft.ErrUnsafe) {
		s.out = append(s.out, "returned ErrUnsafe")
		return
	}
	if err != nil {
		s.fatalf(d, "%v", err)
	}
}

// report prints what the node sent, its events and its state.
func (s *script) report() string {
	if s.node == nil {
		lines := s.out
		s.out = nil
		return strings.Join(lines, "\n") + "\n"
	}
	if !s.manualFlush && s.node.NeedsFlush() {
		if err := s.log.Flush(); err != nil {
			s.t.Fatal(err)
		}
		if err := s.node.Flushed(s.now); err != nil && !errors.Is(err, raft.ErrUnsafe) {
			s.t.Fatal(err)
		}
	}
	lines := s.out
	if !s.holdOutbox {
		lines = append(lines, s.collect()...)
	}
	s.out = nil
	lines = append(lines, s.events()...)
	lines = append(lines, s.stateLine())
	return strings.Join(lines, "\n") + "\n"
}

func (s *script) collect() []string {
	var lines []string
	for _, m := range s.node.Outbox() {
		if m.Request != nil {
			s.sent = append(s.sent, m)
		}
		lines = append(lines, printMessage(m))
	}
	return lines
}

func (s *script) events() []string {
	var lines []string
	for _, e := range s.node.TakeEvents() {
		lines = append(lines, "event: "+printEvent(e))
	}
	return lines
}

func (s *script) stateLine() string {
	st := s.node.Status()
	line := fmt.Sprintf("state: %v epoch=%d leader=%d voted=%d leo=%d hwm=%d", st.Role, st.Epoch, st.LeaderID, st.VotedID, st.LogEndOffset, st.HighWatermark)
	if st.LogStartOffset > 0 {
		line += fmt.Sprintf(" logStart=%d", st.LogStartOffset)
	}
	if !st.Voter {
		line += " observer"
	}
	return line
}

func (s *script) logLine() string {
	line := fmt.Sprintf("log: start=%d end=%d flushed=%d", s.log.LogStartOffset(), s.log.LogEndOffset(), s.log.LastFlushedOffset())
	if b := logString(s.log); b != "" {
		line += " " + b
	}
	for _, id := range s.log.Snapshots() {
		line += fmt.Sprintf(" snapshot=(endOffset=%d epoch=%d)", id.EndOffset, id.Epoch)
	}
	return line
}

func (s *script) start(d *datadriven.TestData) {
	var id int32
	d.ScanArgs(s.t, "id", &id)
	var voters []int32
	d.ScanArgs(s.t, "voters", &voters)
	s.cfg = raft.DefaultConfig()
	s.cfg.NodeID, s.cfg.Voters, s.cfg.ClusterID = id, voters, "cluster"
	for key, dst := range map[string]*time.Duration{
		"electionTimeout": &s.cfg.ElectionTimeout, "fetchTimeout": &s.cfg.FetchTimeout,
		"electionBackoffMax": &s.cfg.ElectionBackoffMax, "linger": &s.cfg.AppendLinger,
		"requestTimeout": &s.cfg.RequestTimeout, "retryBackoff": &s.cfg.RetryBackoff,
		"heartbeat": &s.cfg.HeartbeatInterval,
	} {
		if a, ok := d.Arg(key); ok {
			v, err := time.ParseDuration(a.SingleVal(s.t))
			if err != nil {
				s.fatalf(d, "%s: %v", key, err)
			}
			*dst = v
		}
	}
	if d.HasArg("push") {
		s.cfg.Replication = raft.Push
	}
	d.MaybeScanArgs(s.t, "maxInflight", &s.cfg.MaxInflight)
	s.now = t0
	s.log = raft.NewMemoryLog()
	s.store = &raft.MemoryQuorumStateStore{}
	s.manualFlush = d.HasArg("manual-flush")
	if a, ok := d.Arg("snapshot"); ok {
		snap := parseSnapshotID(s.t, d, a)
		w, err := s.log.CreateSnapshot(snap)
		s.must(d, err)
		s.must(d, w.Append(snapshotBytes(snap.Epoch, "state")))
		s.must(d, w.Freeze())
		s.must(d, s.log.TruncateFullyAndStartAt(snap.EndOffset))
	}
	if a, ok := d.Arg("log"); ok {
		for i := range a.Vals {
			var epoch int32
			a.Scan(s.t, i, &epoch)
			off := s.log.LogEndOffset()
			recs := []storage.Record{{Value: []byte(fmt.Sprintf("v%d", off))}}
			if _, _, err := s.log.AppendAsLeader(recs, epoch, 0); err != nil {
				s.fatalf(d, "log: %v", err)
			}
		}
		s.must(d, s.log.Flush())
	}
	st := raft.ElectionState{Epoch: 0, LeaderID: -1, VotedID: -1, Voters: voters}
	d.MaybeScanArgs(s.t, "epoch", &st.Epoch)
	d.MaybeScanArgs(s.t, "leader", &st.LeaderID)
	d.MaybeScanArgs(s.t, "voted", &st.VotedID)
	if st.Epoch > 0 || st.LeaderID >= 0 || st.VotedID >= 0 {
		s.must(d, s.store.Write(st))
	}
	s.rec = &recorder{values: map[int64]string{}}
	s.sent = nil
	s.nextID = 1 << 40
	n, err := raft.New(s.cfg, s.log, s.store, s.rec, rand.New(rand.NewPCG(uint64(id), 1)), s.now)
	if err != nil {
		s.out = append(s.out, "start: "+err.Error())
		s.node = nil
		return
	}
	s.node = n
}

// route parses the A->B argument and the API name.
func (s *script) route(d *datadriven.TestData) (from, to int32, api string) {
	if len(d.CmdArgs) < 2 {
		s.fatalf(d, "want A->B API")
	}
	a, b, ok := strings.Cut(d.CmdArgs[0].Key, "->")
	f, err1 := strconv.Atoi(a)
	g, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		s.fatalf(d, "bad route %q", d.CmdArgs[0].Key)
	}
	return int32(f), int32(g), d.CmdArgs[1].Key
}

// pending finds (and with take removes) the oldest request the node sent to
// peer of api.
func (s *script) pending(d *datadriven.TestData, node, peer int32, api string, take bool) raft.Message {
	for i, m := range s.sent {
		if m.From == node && m.To == peer && pushrpc.NameForKey(m.Request.Key()) == api {
			if take {
				s.sent = slices.Delete(s.sent, i, i+1)
			}
			return m
		}
	}
	s.fatalf(d, "node %d sent no %s request to %d", node, api, peer)
	return raft.Message{}
}

func (s *script) step(d *datadriven.TestData) {
	from, to, api := s.route(d)
	f := fields{s: s, d: d}
	for _, a := range d.CmdArgs[2:] {
		if a.Key == "response" {
			f.response = true
			continue
		}
		f.args = append(f.args, a)
	}
	m := raft.Message{From: from, To: to}
	if f.response {
		req := s.pending(d, to, from, api, true)
		m.ID = req.ID
		m.Response = f.buildResponse(api, req.Request)
	} else {
		s.nextID++
		m.ID = s.nextID
		m.Request = f.buildRequest(api, from)
	}
	f.done()
	s.must(d, s.node.Step(s.now, m))
}

func (s *script) tick(d *datadriven.TestData) {
	if d.HasArg("deadline") {
		dl := s.node.NextDeadline()
		if dl.IsZero() {
			s.fatalf(d, "no deadline")
		}
		if dl.After(s.now) {
			s.now = dl
		}
		s.must(d, s.node.Tick(s.now))
		s.out = append(s.out, fmt.Sprintf("clock: %v", s.now.Sub(t0)))
		return
	}
	if len(d.CmdArgs) != 1 {
		s.fatalf(d, "tick D or tick deadline")
	}
	dur, err := time.ParseDuration(d.CmdArgs[0].Key)
	if err != nil {
		s.fatalf(d, "%v", err)
	}
	end := s.now.Add(dur)
	for {
		dl := s.node.NextDeadline()
		if dl.IsZero() || dl.After(end) {
			break
		}
		if dl.After(s.now) {
			s.now = dl
		}
		s.must(d, s.node.Tick(s.now))
		if !s.manualFlush && s.node.NeedsFlush() {
			s.must(d, s.log.Flush())
			s.must(d, s.node.Flushed(s.now))
		}
		// What a timer made the node do is shown with its time.
		if got := append(s.collect(), s.events()...); len(got) > 0 {
			s.out = append(s.out, fmt.Sprintf("at %v:", s.now.Sub(t0)))
			s.out = append(s.out, got...)
		}
	}
	s.now = end
	s.out = append(s.out, fmt.Sprintf("clock: %v", s.now.Sub(t0)))
}

// elect ticks the node through an election, granting every pre-vote and
// vote it asks for, and keeps quiet about the messages.
func (s *script) elect(d *datadriven.TestData) {
	for range 100 {
		if s.node.Status().Role == raft.Leader {
			break
		}
		answered := false
		for _, m := range s.node.Outbox() {
			if m.Request != nil && pushrpc.IsKey(m.Request.Key()) {
				s.sent = append(s.sent, m)
			}
			if m.Request == nil || m.Request.Key() != kmsg.Vote.Int16() {
				continue
			}
			answered = true
			p := m.Request.(*kmsg.VoteRequest).Topics[0].Partitions[0]
			s.must(d, s.node.Step(s.now, raft.Message{From: m.To, To: m.From, ID: m.ID, Response: voteResponse(m, p.CandidateEpoch, -1, true)}))
		}
		if answered {
			continue
		}
		if dl := s.node.NextDeadline(); !dl.IsZero() && dl.After(s.now) {
			s.now = dl
		}
		s.must(d, s.node.Tick(s.now))
	}
	if s.node.Status().Role != raft.Leader {
		s.fatalf(d, "not elected: %s", s.stateLine())
	}
	keep := func() {
		for _, m := range s.node.Outbox() {
			if m.Request != nil && pushrpc.IsKey(m.Request.Key()) {
				s.sent = append(s.sent, m)
			}
		}
	}
	keep()
	if s.node.NeedsFlush() {
		s.must(d, s.log.Flush())
		s.must(d, s.node.Flushed(s.now))
	}
	keep()
	s.out = append(s.out, fmt.Sprintf("clock: %v", s.now.Sub(t0)))
}

// fields reads the field=value arguments of a step.
type fields struct {
	s        *script
	d        *datadriven.TestData
	args     []datadriven.CmdArg
	used     map[string]bool
	response bool
}

func (f *fields) arg(key string) (datadriven.CmdArg, bool) {
	for _, a := range f.args {
		if a.Key == key {
			if f.used == nil {
				f.used = map[string]bool{}
			}
			f.used[key] = true
			return a, true
		}
	}
	return datadriven.CmdArg{}, false
}

func (f *fields) int64(key string, def int64) int64 {
	a, ok := f.arg(key)
	if !ok {
		return def
	}
	v := a.SingleVal(f.s.t)
	if v == "max" {
		return math.MaxInt64
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f.s.fatalf(f.d, "%s=%q: %v", key, v, err)
	}
	return n
}

func (f *fields) int32(key string, def int32) int32 {
	v := f.int64(key, int64(def))
	if v == math.MaxInt64 {
		return math.MaxInt32
	}
	return int32(v)
}

func (f *fields) bool(key string) bool {
	a, ok := f.arg(key)
	return ok && (len(a.Vals) == 0 || a.Vals[0] == "true")
}

func (f *fields) code() int16 {
	a, ok := f.arg("error")
	if !ok {
		return 0
	}
	name := a.SingleVal(f.s.t)
	for c := int16(-1); c < 120; c++ {
		if raft.ErrorName(c) == name {
			return c
		}
	}
	f.s.fatalf(f.d, "unknown error %q", name)
	return 0
}

// pair reads key=(a=1 b=2) as the two named values.
func (f *fields) pair(key, k1, k2 string) (int64, int64, bool) {
	a, ok := f.arg(key)
	if !ok {
		return 0, 0, false
	}
	v1, v2 := parsePair(f.s.t, f.d, key, a.SingleVal(f.s.t), k1, k2)
	return v1, v2, true
}

func parsePair(t *testing.T, d *datadriven.TestData, key, val, k1, k2 string) (int64, int64) {
	var v1, v2 int64
	got := 0
	for _, kv := range strings.Fields(val) {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			d.Fatalf(t, "%s: %q", key, kv)
		case k == k1:
			v1 = n
		case k == k2:
			v2 = n
		default:
			d.Fatalf(t, "%s: want (%s=N %s=N), got %q", key, k1, k2, val)
		}
		got++
	}
	if got != 2 {
		d.Fatalf(t, "%s: want (%s=N %s=N), got %q", key, k1, k2, val)
	}
	return v1, v2
}

func parseSnapshotID(t *testing.T, d *datadriven.TestData, a datadriven.CmdArg) raft.SnapshotID {
	end, epoch := parsePair(t, d, a.Key, a.SingleVal(t), "endOffset", "epoch")
	return raft.SnapshotID{EndOffset: end, Epoch: int32(epoch)}
}

func (f *fields) done() {
	for _, a := range f.args {
		if !f.used[a.Key] {
			f.s.fatalf(f.d, "unknown field %q", a.Key)
		}
	}
}

func (f *fields) buildRequest(api string, from int32) kmsg.Request {
	cluster := "cluster"
	switch api {
	case "Fetch":
		req := fetchRequest(f.int32("replica", from), f.int32("epoch", 0), f.int64("fetchOffset", 0), f.int32("lastFetchedEpoch", 0), f.int32("maxWait", 0))
		req.Topics[0].Partitions[0].HighWatermark = f.int64("hwm", math.MaxInt64)
		if v := f.int32("version", -1); v >= 0 {
			req.Version = int16(v)
		}
		return req
	case "Vote":
		return voteReq(f.int32("candidate", from), f.int32("epoch", 0), f.int32("lastEpoch", 0), f.int64("lastOffset", 0), f.bool("preVote"))
	case "BeginQuorumEpoch":
		return beginReq(f.int32("leader", from), f.int32("epoch", 0))
	case "EndQuorumEpoch":
		var succ []int32
		if a, ok := f.arg("successors"); ok {
			for i := range a.Vals {
				var v int32
				a.Scan(f.s.t, i, &v)
				succ = append(succ, v)
			}
		}
		return endReq(f.int32("leader", from), f.int32("epoch", 0), succ...)
	case "FetchSnapshot":
		req := kmsg.NewPtrFetchSnapshotRequest()
		req.Version = raft.FetchSnapshotVersion
		req.ClusterID = &cluster
		req.ReplicaID = f.int32("replica", from)
		req.MaxBytes = 1 << 20
		p := kmsg.NewFetchSnapshotRequestTopicPartition()
		p.CurrentLeaderEpoch = f.int32("epoch", 0)
		if a, ok := f.arg("snapshotId"); ok {
			id := parseSnapshotID(f.s.t, f.d, a)
			p.SnapshotID.EndOffset, p.SnapshotID.Epoch = id.EndOffset, id.Epoch
		}
		p.Position = f.int64("position", 0)
		t := kmsg.NewFetchSnapshotRequestTopic()
		t.Topic = raft.MetadataTopic
		t.Partitions = []kmsg.FetchSnapshotRequestTopicPartition{p}
		req.Topics = []kmsg.FetchSnapshotRequestTopic{t}
		return req
	case "AppendEntries":
		req := &pushrpc.AppendEntriesRequest{ClusterID: &cluster, LeaderID: f.int32("leader", from), LeaderEpoch: f.int32("epoch", 0),
			BaseOffset: f.int64("base", 0), PrevEpoch: f.int32("prevEpoch", 0), HighWatermark: f.int64("hwm", -1)}
		if a, ok := f.arg("records"); ok {
			// One batch per record, from the base offset, in the epochs given.
			off := req.BaseOffset
			for i := range a.Vals {
				var e int32
				a.Scan(f.s.t, i, &e)
				req.Records = storage.AppendBatch(req.Records, storage.BatchSpec{BaseOffset: off, LeaderEpoch: e},
					[]storage.Record{{Value: []byte(fmt.Sprintf("v%d", off))}})
				off++
			}
		}
		return req
	case "InstallSnapshot":
		req := &pushrpc.InstallSnapshotRequest{ClusterID: &cluster, LeaderID: f.int32("leader", from), LeaderEpoch: f.int32("epoch", 0)}
		if a, ok := f.arg("snapshotId"); ok {
			id := parseSnapshotID(f.s.t, f.d, a)
			req.SnapshotID = pushrpc.EpochEndOffset{EndOffset: id.EndOffset, Epoch: id.Epoch}
		}
		// The snapshot of snapshotBytes, in chunks of the given size.
		whole := snapshotBytes(req.SnapshotID.Epoch, "state")
		req.Size = int64(len(whole))
		req.Position = f.int64("position", 0)
		chunk := f.int64("chunk", req.Size)
		req.Bytes = whole[min(req.Position, req.Size):min(req.Position+chunk, req.Size)]
		return req
	case "ObserveQuorum":
		return &pushrpc.ObserveQuorumRequest{ClusterID: &cluster, ReplicaID: f.int32("replica", from), LogEndOffset: f.int64("leo", 0), LastEpoch: f.int32("lastEpoch", 0)}
	case "DescribeQuorum":
		req := kmsg.NewPtrDescribeQuorumRequest()
		req.Version = raft.DescribeQuorumVersion
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = raft.MetadataTopic
		rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
		req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
		return req
	}
	f.s.fatalf(f.d, "unknown request %q", api)
	return nil
}

func (f *fields) buildResponse(api string, req kmsg.Request) kmsg.Response {
	code := f.code()
	leader, epoch := f.int32("leader", -1), f.int32("epoch", 0)
	switch api {
	case "Vote":
		resp := voteResponse(raft.Message{Request: req}, epoch, leader, f.bool("granted"))
		resp.Topics[0].Partitions[0].ErrorCode = code
		return resp
	case "BeginQuorumEpoch":
		resp := req.ResponseKind().(*kmsg.BeginQuorumEpochResponse)
		p := kmsg.NewBeginQuorumEpochResponseTopicPartition()
		p.ErrorCode, p.LeaderID, p.LeaderEpoch = code, leader, epoch
		t := kmsg.NewBeginQuorumEpochResponseTopic()
		t.Topic = raft.MetadataTopic
		t.Partitions = []kmsg.BeginQuorumEpochResponseTopicPartition{p}
		resp.Topics = []kmsg.BeginQuorumEpochResponseTopic{t}
		return resp
	case "EndQuorumEpoch":
		resp := req.ResponseKind().(*kmsg.EndQuorumEpochResponse)
		p := kmsg.NewEndQuorumEpochResponseTopicPartition()
		p.ErrorCode, p.LeaderID, p.LeaderEpoch = code, leader, epoch
		t := kmsg.NewEndQuorumEpochResponseTopic()
		t.Topic = raft.MetadataTopic
		t.Partitions = []kmsg.EndQuorumEpochResponseTopicPartition{p}
		resp.Topics = []kmsg.EndQuorumEpochResponseTopic{t}
		return resp
	case "Fetch":
		fetch := req.(*kmsg.FetchRequest).Topics[0].Partitions[0]
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		p := kmsg.NewFetchResponseTopicPartition()
		p.ErrorCode = code
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = leader, epoch
		p.HighWatermark = f.int64("hwm", -1)
		if e, o, ok := f.pair("divergingEpoch", "epoch", "endOffset"); ok {
			p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = int32(e), o
		}
		if o, e, ok := f.pair("snapshotId", "endOffset", "epoch"); ok {
			p.SnapshotID.EndOffset, p.SnapshotID.Epoch = o, int32(e)
		}
		if a, ok := f.arg("records"); ok {
			// One batch per record, from the fetch offset, in the epochs given.
			off := fetch.FetchOffset
			for i := range a.Vals {
				var e int32
				a.Scan(f.s.t, i, &e)
				p.RecordBatches = storage.AppendBatch(p.RecordBatches, storage.BatchSpec{BaseOffset: off, LeaderEpoch: e},
					[]storage.Record{{Value: []byte(fmt.Sprintf("v%d", off))}})
				off++
			}
		}
		t := kmsg.NewFetchResponseTopic()
		t.TopicID = raft.MetadataTopicID
		t.Partitions = []kmsg.FetchResponseTopicPartition{p}
		resp.Topics = []kmsg.FetchResponseTopic{t}
		return resp
	case "AppendEntries":
		resp := &pushrpc.AppendEntriesResponse{ErrorCode: code, LeaderID: leader, LeaderEpoch: epoch, Success: f.bool("success"),
			MatchOffset: f.int64("match", -1), DivergingEpoch: pushrpc.EpochEndOffset{Epoch: -1, EndOffset: -1}, LogEndOffset: f.int64("leo", 0)}
		if e, o, ok := f.pair("divergingEpoch", "epoch", "endOffset"); ok {
			resp.DivergingEpoch = pushrpc.EpochEndOffset{Epoch: int32(e), EndOffset: o}
		}
		return resp
	case "InstallSnapshot":
		r := req.(*pushrpc.InstallSnapshotRequest)
		return &pushrpc.InstallSnapshotResponse{ErrorCode: code, LeaderID: leader, LeaderEpoch: epoch, Position: f.int64("position", r.Position+int64(len(r.Bytes)))}
	case "ObserveQuorum":
		return &pushrpc.ObserveQuorumResponse{ErrorCode: code, LeaderID: leader, LeaderEpoch: epoch}
	case "FetchSnapshot":
		rp := req.(*kmsg.FetchSnapshotRequest).Topics[0].Partitions[0]
		resp := req.ResponseKind().(*kmsg.FetchSnapshotResponse)
		p := kmsg.NewFetchSnapshotResponseTopicPartition()
		p.ErrorCode = code
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = leader, epoch
		p.SnapshotID = kmsg.FetchSnapshotResponseTopicPartitionSnapshotID(rp.SnapshotID)
		if code == 0 {
			// The whole snapshot, in one chunk.
			p.Bytes = snapshotBytes(rp.SnapshotID.Epoch, "state")
			p.Size, p.Position = int64(len(p.Bytes)), rp.Position
		}
		t := kmsg.NewFetchSnapshotResponseTopic()
		t.Topic = raft.MetadataTopic
		t.Partitions = []kmsg.FetchSnapshotResponseTopicPartition{p}
		resp.Topics = []kmsg.FetchSnapshotResponseTopic{t}
		return resp
	}
	f.s.fatalf(f.d, "unknown response %q", api)
	return nil
}

// snapshotBytes lays out a snapshot holding one record, as Kafka's
// RecordsSnapshotWriter does: header, data, footer.
func snapshotBytes(epoch int32, value string) []byte {
	var b []byte
	b = storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 0, LeaderEpoch: epoch, Control: true}, []storage.Record{storage.SnapshotHeaderRecord(0)})
	b = storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 1, LeaderEpoch: epoch}, []storage.Record{{Value: []byte(value)}})
	b = storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 2, LeaderEpoch: epoch, Control: true}, []storage.Record{storage.SnapshotFooterRecord()})
	return b
}

// printMessage renders a message on one line with the fields that matter
// for its API.
func printMessage(m raft.Message) string {
	route := fmt.Sprintf("%d->%d", m.From, m.To)
	switch {
	case m.Err != nil:
		return fmt.Sprintf("%s failed: %v", route, m.Err)
	case m.Request != nil:
		return route + " " + printRequest(m.From, m.Request)
	default:
		return route + " " + printResponse(m.Response)
	}
}

func errField(code int16) string {
	if code == 0 {
		return ""
	}
	return " error=" + raft.ErrorName(code)
}

func printRequest(from int32, r kmsg.Request) string {
	switch r := r.(type) {
	case *kmsg.FetchRequest:
		p := r.Topics[0].Partitions[0]
		s := fmt.Sprintf("Fetch epoch=%d fetchOffset=%d lastFetchedEpoch=%d", p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch)
		if p.HighWatermark == math.MaxInt64 {
			s += " hwm=max"
		} else {
			s += fmt.Sprintf(" hwm=%d", p.HighWatermark)
		}
		s += fmt.Sprintf(" maxWait=%dms", r.MaxWaitMillis)
		if r.ReplicaState.ID != from {
			s += fmt.Sprintf(" replica=%d", r.ReplicaState.ID)
		}
		return s
	case *kmsg.VoteRequest:
		p := r.Topics[0].Partitions[0]
		s := "Vote"
		if p.PreVote {
			s += " preVote"
		}
		s += fmt.Sprintf(" epoch=%d lastEpoch=%d lastOffset=%d", p.CandidateEpoch, p.LastOffsetEpoch, p.LastOffset)
		if p.CandidateID != from {
			s += fmt.Sprintf(" candidate=%d", p.CandidateID)
		}
		return s
	case *kmsg.BeginQuorumEpochRequest:
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("BeginQuorumEpoch epoch=%d leader=%d", p.LeaderEpoch, p.LeaderID)
	case *kmsg.EndQuorumEpochRequest:
		p := r.Topics[0].Partitions[0]
		var succ []string
		for _, c := range p.PreferredCandidates {
			succ = append(succ, strconv.Itoa(int(c.CandidateID)))
		}
		return fmt.Sprintf("EndQuorumEpoch epoch=%d leader=%d successors=(%s)", p.LeaderEpoch, p.LeaderID, strings.Join(succ, ","))
	case *kmsg.FetchSnapshotRequest:
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("FetchSnapshot epoch=%d snapshotId=(endOffset=%d epoch=%d) position=%d", p.CurrentLeaderEpoch, p.SnapshotID.EndOffset, p.SnapshotID.Epoch, p.Position)
	case *kmsg.DescribeQuorumRequest:
		return "DescribeQuorum"
	case *pushrpc.AppendEntriesRequest:
		s := fmt.Sprintf("AppendEntries epoch=%d base=%d prevEpoch=%d hwm=%d", r.LeaderEpoch, r.BaseOffset, r.PrevEpoch, r.HighWatermark)
		if r.LeaderID != from {
			s += fmt.Sprintf(" leader=%d", r.LeaderID)
		}
		return s + printBatches(r.Records)
	case *pushrpc.InstallSnapshotRequest:
		return fmt.Sprintf("InstallSnapshot epoch=%d snapshotId=(endOffset=%d epoch=%d) position=%d size=%d bytes=%d",
			r.LeaderEpoch, r.SnapshotID.EndOffset, r.SnapshotID.Epoch, r.Position, r.Size, len(r.Bytes))
	case *pushrpc.ObserveQuorumRequest:
		return fmt.Sprintf("ObserveQuorum leo=%d lastEpoch=%d", r.LogEndOffset, r.LastEpoch)
	}
	return pushrpc.NameForKey(r.Key())
}

// printBatches lists record batches as first-last:epoch.
func printBatches(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	var batches []string
	_ = storage.Batches(data, func(_ int, b *storage.Batch) error {
		batches = append(batches, fmt.Sprintf("%d-%d:e%d", b.FirstOffset, b.LastOffset(), b.PartitionLeaderEpoch))
		return nil
	})
	return " records=(" + strings.Join(batches, " ") + ")"
}

func printResponse(r kmsg.Response) string {
	switch r := r.(type) {
	case *kmsg.FetchResponse:
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return "Fetch response" + errField(r.ErrorCode)
		}
		p := r.Topics[0].Partitions[0]
		s := "Fetch response" + errField(p.ErrorCode)
		s += fmt.Sprintf(" leader=%d epoch=%d hwm=%d", p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch, p.HighWatermark)
		if p.DivergingEpoch.Epoch >= 0 || p.DivergingEpoch.EndOffset >= 0 {
			s += fmt.Sprintf(" divergingEpoch=(epoch=%d endOffset=%d)", p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset)
		}
		if p.SnapshotID.Epoch >= 0 || p.SnapshotID.EndOffset >= 0 {
			s += fmt.Sprintf(" snapshotId=(endOffset=%d epoch=%d)", p.SnapshotID.EndOffset, p.SnapshotID.Epoch)
		}
		return s + printBatches(p.RecordBatches)
	case *kmsg.VoteResponse:
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return "Vote response" + errField(r.ErrorCode)
		}
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("Vote response%s granted=%v epoch=%d leader=%d", errField(p.ErrorCode), p.VoteGranted, p.LeaderEpoch, p.LeaderID)
	case *kmsg.BeginQuorumEpochResponse:
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return "BeginQuorumEpoch response" + errField(r.ErrorCode)
		}
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("BeginQuorumEpoch response%s epoch=%d leader=%d", errField(p.ErrorCode), p.LeaderEpoch, p.LeaderID)
	case *kmsg.EndQuorumEpochResponse:
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return "EndQuorumEpoch response" + errField(r.ErrorCode)
		}
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("EndQuorumEpoch response%s epoch=%d leader=%d", errField(p.ErrorCode), p.LeaderEpoch, p.LeaderID)
	case *kmsg.FetchSnapshotResponse:
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return "FetchSnapshot response" + errField(r.ErrorCode)
		}
		p := r.Topics[0].Partitions[0]
		s := fmt.Sprintf("FetchSnapshot response%s leader=%d epoch=%d snapshotId=(endOffset=%d epoch=%d)", errField(p.ErrorCode),
			p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch, p.SnapshotID.EndOffset, p.SnapshotID.Epoch)
		if p.ErrorCode == 0 {
			s += fmt.Sprintf(" position=%d size=%d bytes=%d", p.Position, p.Size, len(p.Bytes))
		}
		return s
	case *kmsg.DescribeQuorumResponse:
		s := "DescribeQuorum response" + errField(r.ErrorCode)
		if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return s
		}
		p := r.Topics[0].Partitions[0]
		s += errField(p.ErrorCode)
		if p.ErrorCode != 0 {
			if p.LeaderID != 0 || p.LeaderEpoch != 0 || p.HighWatermark != 0 || len(p.CurrentVoters)+len(p.Observers) > 0 {
				s += fmt.Sprintf(" leader=%d epoch=%d hwm=%d voters=%d observers=%d", p.LeaderID, p.LeaderEpoch, p.HighWatermark, len(p.CurrentVoters), len(p.Observers))
			}
			return s
		}
		replicas := func(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) string {
			var out []string
			for _, r := range rs {
				out = append(out, fmt.Sprintf("%d:leo=%d", r.ReplicaID, r.LogEndOffset))
			}
			return "(" + strings.Join(out, " ") + ")"
		}
		return s + fmt.Sprintf(" leader=%d epoch=%d hwm=%d voters=%s observers=%s", p.LeaderID, p.LeaderEpoch, p.HighWatermark, replicas(p.CurrentVoters), replicas(p.Observers))
	case *pushrpc.AppendEntriesResponse:
		s := fmt.Sprintf("AppendEntries response%s leader=%d epoch=%d", errField(r.ErrorCode), r.LeaderID, r.LeaderEpoch)
		switch {
		case r.Success:
			s += fmt.Sprintf(" success match=%d", r.MatchOffset)
		case r.ErrorCode == 0:
			s += fmt.Sprintf(" refused divergingEpoch=(epoch=%d endOffset=%d)", r.DivergingEpoch.Epoch, r.DivergingEpoch.EndOffset)
		}
		return s + fmt.Sprintf(" leo=%d", r.LogEndOffset)
	case *pushrpc.InstallSnapshotResponse:
		return fmt.Sprintf("InstallSnapshot response%s leader=%d epoch=%d position=%d", errField(r.ErrorCode), r.LeaderID, r.LeaderEpoch, r.Position)
	case *pushrpc.ObserveQuorumResponse:
		return fmt.Sprintf("ObserveQuorum response%s leader=%d epoch=%d", errField(r.ErrorCode), r.LeaderID, r.LeaderEpoch)
	}
	return pushrpc.NameForKey(r.Key()) + " response"
}

func printEvent(e raft.Event) string {
	s := e.Kind.String()
	switch e.Kind {
	case raft.EventRoleChanged:
		return fmt.Sprintf("%s %v(epoch=%d leader=%d voted=%d) -> %v(epoch=%d leader=%d voted=%d)", s,
			e.From, e.FromEpoch, e.FromLeader, e.FromVoted, e.To, e.Epoch, e.Leader, e.Voted)
	case raft.EventVoteGranted:
		return fmt.Sprintf("%s candidate=%d epoch=%d preVote=%v", s, e.Candidate, e.Epoch, e.PreVote)
	case raft.EventElectionWon:
		return fmt.Sprintf("%s epoch=%d startOffset=%d", s, e.Epoch, e.LogEndOffset)
	case raft.EventBeginQuorumEpochReceived:
		return fmt.Sprintf("%s leader=%d epoch=%d", s, e.Leader, e.Epoch)
	case raft.EventEndQuorumEpochSent, raft.EventEndQuorumEpochReceived:
		return fmt.Sprintf("%s leader=%d epoch=%d successors=%v", s, e.Leader, e.Epoch, e.Successors)
	case raft.EventTruncated:
		return fmt.Sprintf("%s leader=%d from=%d to=%d", s, e.Leader, e.FromOffset, e.ToOffset)
	case raft.EventLogStartAdvanced:
		return fmt.Sprintf("%s from=%d to=%d", s, e.FromOffset, e.ToOffset)
	case raft.EventSnapshotFetched:
		return fmt.Sprintf("%s leader=%d snapshotId=(endOffset=%d epoch=%d)", s, e.Leader, e.Snapshot.EndOffset, e.Snapshot.Epoch)
	case raft.EventSnapshotLoaded, raft.EventSnapshotTaken:
		return fmt.Sprintf("%s snapshotId=(endOffset=%d epoch=%d)", s, e.Snapshot.EndOffset, e.Snapshot.Epoch)
	case raft.EventHighWatermarkKnown:
		return fmt.Sprintf("%s epoch=%d hwm=%d", s, e.Epoch, e.HighWatermark)
	case raft.EventUnsafe:
		return fmt.Sprintf("%s kafkaStops=%v refused=%q", s, e.KafkaStops, e.Refused)
	case raft.EventElectionLost:
		if e.NextTry.IsZero() {
			return fmt.Sprintf("%s epoch=%d preVote=%v granted=%v rejected=%v majority=%d follows=%d", s, e.Epoch, e.PreVote, e.Granted, e.Rejected, e.Majority, e.Leader)
		}
		return fmt.Sprintf("%s epoch=%d preVote=%v granted=%v rejected=%v majority=%d nextTry=+%v", s, e.Epoch, e.PreVote, e.Granted, e.Rejected, e.Majority, e.NextTry.Sub(e.Time))
	}
	return fmt.Sprintf("%s epoch=%d", s, e.Epoch)
}

func orNone(lines []string) string {
	if len(lines) == 0 {
		return "(none)\n"
	}
	return strings.Join(lines, "\n") + "\n"
}
