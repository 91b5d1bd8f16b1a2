package partition

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftlab/kraftlab/internal/transcript"
	"github.com/kraftlab/kraftlab/storage"
)

// TestTranscripts runs the replica stories of testdata/transcripts: every
// replica of one partition (t-0) is a Partition on its own broker, and the
// script plays what surrounds them: the controller's decisions, the
// producers, the fetcher threads and the consumers. Rewrite the expected
// outputs with
//
//	go test ./replication/partition/ -run TestTranscripts -rewrite
//
// The command language (replicas are named by broker id):
//
//	open ID... [min.insync.replicas=N] [replica.lag.time.max.ms=D]
//	    opens a replica of t-0 on each broker.
//	elect ID epoch=E replicas=(...) isr=(...)
//	    the metadata names ID leader in leader epoch E (partition epoch E
//	    too): MakeLeader there, MakeFollower on every other open replica.
//	produce [to=ID] [acks=-1|1|0] [records=N] [timeout=30s]
//	        [pid=P producer-epoch=E seq=S] [transactional]
//	    a producer's batch to the leader; an acks=-1 one waits in the
//	    purgatory (DelayedProduce) until it is answered.
//	fetch ID [offset=N] [epoch=E] [last-fetched-epoch=E] [max-bytes=N]
//	    replica ID's fetcher fetches from its leader (by default from its
//	    log end, in its leader epoch, with its log's last epoch) and
//	    appends what it gets and the leader's high watermark.
//	consume [offset=N]  a consumer's read (below the high watermark).
//	truncate ID offset=N        the fetcher truncates its replica.
//	offsets-for-epoch ID epoch=E [current-epoch=E]
//	    OffsetForLeaderEpoch asked of replica ID.
//	alter-partition     the leader's ISR change to propose, if any.
//	alter-partition-response [error=NAME]
//	    the controller's answer: the change commits (every replica takes
//	    the new ISR and partition epoch) or is refused.
//	eligible ID...|all  the brokers the controller calls eligible for
//	                    the ISR (unfenced, not shutting down).
//	config min.insync.replicas=N    a dynamic config change, on every
//	                    replica.
//	tick D              runs the clock; expired produces are answered.
//	state | log ID | producers ID
//
// Every command prints what it did, the produces it answered, and the
// state of the replicas it touched.
func TestTranscripts(t *testing.T) {
	transcript.Walk(t, "testdata/transcripts", func(t *testing.T) transcript.Script {
		s := &ptScript{t: t, clock: transcript.NewClock(t0), dir: t.TempDir(), replicas: map[int32]*Partition{},
			purgatory: NewPurgatory[*Partition]()}
		t.Cleanup(s.close)
		return s.run
	})
}

type ptScript struct {
	t         *testing.T
	clock     *transcript.Clock
	dir       string
	ids       []int32
	replicas  map[int32]*Partition
	eligible  []int32 // nil: every broker
	purgatory *Purgatory[*Partition]
	produces  int
	// proposal is the ISR change the leader sent the controller.
	proposal *Proposal
	// answered are the produces the purgatory completed, to print.
	answered transcript.Lines
}

func (s *ptScript) close() {
	for _, p := range s.replicas {
		p.Close()
	}
}

func (s *ptScript) run(c *transcript.Cmd) string {
	c.T.Helper()
	var out transcript.Lines
	touched := map[int32]bool{}
	switch c.Name() {
	case "open":
		s.open(c)
		return ""
	case "elect":
		out = s.elect(c, touched)
	case "produce":
		out = s.produce(c, touched)
	case "fetch":
		out = s.fetch(c, touched)
	case "consume":
		out = s.consume(c)
	case "truncate":
		id := s.replicaArg(c)
		offset := c.Int("offset", -1)
		if err := s.replicas[id].TruncateTo(offset); err != nil {
			out.Addf("truncate %d: %s", id, transcript.Err(err))
		}
		touched[id] = true
	case "offsets-for-epoch":
		out = s.offsetsForEpoch(c)
	case "alter-partition":
		out = s.alterPartition(c)
	case "alter-partition-response":
		out = s.alterPartitionResponse(c, touched)
	case "eligible":
		words := c.Words()
		if len(words) == 1 && words[0] == "all" {
			s.eligible = nil
			return ""
		}
		ids, err := transcript.ParseIDs(words)
		if err != nil || len(ids) == 0 {
			c.Fatalf("eligible ID...|all")
		}
		s.eligible = ids
		return ""
	case "config":
		n := c.Int("min.insync.replicas", 0)
		for _, id := range s.ids {
			if err := s.replicas[id].SetMinInsyncReplicas(int(n)); err != nil {
				out.Addf("%d: %s", id, transcript.Err(err))
			}
		}
		return out.String()
	case "tick":
		out = s.tick(c)
	case "state":
		for _, id := range s.ids {
			out = append(out, s.stateLines(id, true)...)
		}
		return out.String()
	case "log":
		return s.logLine(s.replicaArg(c)) + "\n"
	case "producers":
		return s.producersOf(s.replicaArg(c))
	default:
		c.Fatalf("unknown command %q", c.Name())
	}
	out = append(out, s.answered...)
	s.answered = nil
	for _, id := range s.ids {
		if touched[id] {
			out = append(out, s.stateLines(id, false)...)
		}
	}
	return out.String()
}

func (s *ptScript) open(c *transcript.Cmd) {
	minISR := int(c.Int("min.insync.replicas", 0))
	lag := c.Dur("replica.lag.time.max.ms", 0)
	ids, err := transcript.ParseIDs(c.Words())
	if err != nil || len(ids) == 0 {
		c.Fatalf("open ID...")
	}
	for _, id := range ids {
		if s.replicas[id] != nil {
			c.Fatalf("replica %d is open", id)
		}
		p, err := New(Config{
			Topic: "t", TopicID: topicID, Partition: 0, Dir: filepath.Join(s.dir, fmt.Sprintf("broker-%d", id)), LocalBrokerID: id,
			Log: storage.Options{FlushPolicy: storage.FlushNever}, MinInsyncReplicas: minISR, ReplicaLagTimeMax: lag,
			ReplicaEligible: func(b int32) bool { return s.eligible == nil || slices.Contains(s.eligible, b) },
			Now:             s.clock.Now,
		})
		if err != nil {
			c.Fatalf("open %d: %v", id, err)
		}
		s.replicas[id] = p
		s.ids = append(s.ids, id)
	}
	slices.Sort(s.ids)
}

// replicaArg is the one positional broker id of a command.
func (s *ptScript) replicaArg(c *transcript.Cmd) int32 {
	c.T.Helper()
	ids, err := transcript.ParseIDs(c.Words())
	if err != nil || len(ids) != 1 || s.replicas[ids[0]] == nil {
		c.Fatalf("want the id of an open replica")
	}
	return ids[0]
}

// leader is the replica that leads, or the one to= names.
func (s *ptScript) leader(c *transcript.Cmd) (int32, *Partition) {
	c.T.Helper()
	if id, ok := c.IntOK("to"); ok {
		p := s.replicas[int32(id)]
		if p == nil {
			c.Fatalf("no replica %d", id)
		}
		return int32(id), p
	}
	for _, id := range s.ids {
		if s.replicas[id].State().Role == RoleLeader {
			return id, s.replicas[id]
		}
	}
	c.Fatalf("no replica leads")
	return 0, nil
}

func (s *ptScript) elect(c *transcript.Cmd, touched map[int32]bool) transcript.Lines {
	epoch := c.MustInt32("epoch")
	pe := epoch
	replicas, ok1 := c.IDs("replicas")
	isr, ok2 := c.IDs("isr")
	if !ok1 || !ok2 {
		c.Fatalf("elect ID epoch=E replicas=(...) isr=(...)")
	}
	leader := s.replicaArg(c)
	var out transcript.Lines
	s.proposal = nil
	for _, id := range s.ids {
		p := s.replicas[id]
		var err error
		if id == leader {
			_, err = p.MakeLeader(epoch, pe, replicas, isr, s.clock.Now())
		} else {
			_, err = p.MakeFollower(leader, epoch, pe, replicas, isr)
		}
		if err != nil {
			out.Addf("%d: %s", id, transcript.Err(err))
		}
		touched[id] = true
	}
	s.purgatory.CheckAndComplete(s.replicas[leader])
	return out
}

func (s *ptScript) produce(c *transcript.Cmd, touched map[int32]bool) transcript.Lines {
	acks := int16(c.Int("acks", -1))
	n := int(c.Int("records", 1))
	timeout := c.Dur("timeout", 30*time.Second)
	pid, idem := c.IntOK("pid")
	pepoch := int16(c.Int("producer-epoch", 0))
	seq := c.Int32("seq", 0)
	txn := c.Has("transactional")
	id, p := s.leader(c)
	s.produces++
	req := s.produces
	raw := producerBatch(n, fmt.Sprintf("p%d", req), s.clock.Now().UnixMilli())
	if idem || txn {
		raw = setProducer(raw, pid, pepoch, seq, txn)
	}
	var out transcript.Lines
	what := fmt.Sprintf("produce #%d to %d acks=%d records=%d", req, id, acks, n)
	if idem || txn {
		what += fmt.Sprintf(" pid=%d producerEpoch=%d seq=%d", pid, pepoch, seq)
	}
	info, err := p.AppendAsLeader(raw, acks, s.clock.Now())
	touched[id] = true
	switch {
	case err != nil:
		out.Addf("%s: %s", what, transcript.Err(err))
		return out
	case info.Duplicate:
		out.Addf("%s: duplicate of offsets %d-%d, nothing appended", what, info.FirstOffset, info.LastOffset)
	default:
		out.Addf("%s: offsets %d-%d leaderEpoch=%d", what, info.FirstOffset, info.LastOffset, info.LeaderEpoch)
	}
	if info.HighWatermarkMoved {
		s.purgatory.CheckAndComplete(p)
	}
	if acks != -1 {
		out.Addf("produce #%d answered: error=NONE", req)
		return out
	}
	op := &DelayedProduce{
		Waits: []ProduceWait{{Partition: p, RequiredOffset: info.LastOffset + 1}},
		Done: func(w []ProduceWait) {
			s.answered.Addf("produce #%d answered: %s", req, transcript.Err(w[0].Err))
		},
	}
	if !s.purgatory.TryCompleteElseWatch(op, s.clock.Now().Add(timeout), p) {
		out.Addf("produce #%d waits for the high watermark to reach %d", req, info.LastOffset+1)
	}
	return out
}

// fetch is one round of replica id's fetcher thread (Kafka's
// AbstractFetcherThread.processFetchRequest) against its leader.
func (s *ptScript) fetch(c *transcript.Cmd, touched map[int32]bool) transcript.Lines {
	offset, atOffset := c.IntOK("offset")
	epoch, atEpoch := c.IntOK("epoch")
	lastEpoch, atLast := c.IntOK("last-fetched-epoch")
	maxBytes := int(c.Int("max-bytes", 1<<20))
	id := s.replicaArg(c)
	f := s.replicas[id]
	st := f.State()
	if !atOffset {
		offset = st.LogEndOffset
	}
	if !atEpoch {
		epoch = int64(st.LeaderEpoch)
	}
	if !atLast {
		lastEpoch = int64(f.LastEpoch())
	}
	var out transcript.Lines
	l := s.replicas[st.LeaderID]
	if l == nil {
		c.Fatalf("replica %d follows %d, which is not open", id, st.LeaderID)
	}
	params := FetchParams{ReplicaID: id, FetchOffset: offset, CurrentLeaderEpoch: int32(epoch), LastFetchedEpoch: int32(lastEpoch), MaxBytes: maxBytes}
	out.Addf("%d->%d Fetch offset=%d epoch=%d lastFetchedEpoch=%d", id, st.LeaderID, offset, epoch, lastEpoch)
	res, err := l.Read(params)
	touched[st.LeaderID], touched[id] = true, true
	if err != nil {
		out.Addf("%d->%d %s", st.LeaderID, id, transcript.Err(err))
		return out
	}
	if d := res.DivergingEpoch; d != nil {
		out.Addf("%d->%d divergingEpoch=(epoch=%d endOffset=%d) hwm=%d", st.LeaderID, id, d.Epoch, d.EndOffset, res.HighWatermark)
		return out
	}
	out.Addf("%d->%d records=%s hwm=%d leo=%d", st.LeaderID, id, batchList(res.Records), res.HighWatermark, res.LogEndOffset)
	// The leader takes the fetch offset as the follower's acknowledgement
	// (ReplicaManager.updateFollowerFetchState, after the read).
	moved, err := l.UpdateFollowerFetch(id, -1, offset, s.clock.Now())
	if err != nil {
		out.Addf("%d: update follower fetch: %s", st.LeaderID, transcript.Err(err))
	}
	if moved {
		s.purgatory.CheckAndComplete(l)
	}
	if err := f.AppendAsFollower(res.Records); err != nil {
		out.Addf("%d: append as follower: %s", id, transcript.Err(err))
		return out
	}
	f.UpdateHighWatermark(res.HighWatermark)
	return out
}

func (s *ptScript) consume(c *transcript.Cmd) transcript.Lines {
	offset := c.Int("offset", 0)
	id, l := s.leader(c)
	var out transcript.Lines
	res, err := l.Read(FetchParams{ReplicaID: -1, FetchOffset: offset, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch,
		MaxBytes: 1 << 20, Isolation: IsolationHighWatermark})
	if err != nil {
		out.Addf("consumer->%d Fetch offset=%d: %s", id, offset, transcript.Err(err))
		return out
	}
	out.Addf("consumer->%d Fetch offset=%d: records=%s hwm=%d", id, offset, batchList(res.Records), res.HighWatermark)
	return out
}

func (s *ptScript) offsetsForEpoch(c *transcript.Cmd) transcript.Lines {
	epoch := c.MustInt32("epoch")
	current := c.Int32("current-epoch", NoEpoch)
	id := s.replicaArg(c)
	var out transcript.Lines
	e, err := s.replicas[id].LastOffsetForLeaderEpoch(current, epoch, false)
	if err != nil {
		out.Addf("OffsetForLeaderEpoch %d epoch=%d: %s", id, epoch, transcript.Err(err))
		return out
	}
	out.Addf("OffsetForLeaderEpoch %d epoch=%d: leaderEpoch=%d endOffset=%d", id, epoch, e.Epoch, e.EndOffset)
	return out
}

func (s *ptScript) alterPartition(c *transcript.Cmd) transcript.Lines {
	id, l := s.leader(c)
	var out transcript.Lines
	prop, ok := l.ISRChange(s.clock.Now())
	if !ok {
		out.Addf("%d: no ISR change to propose", id)
		return out
	}
	s.proposal = &prop
	out.Addf("%d->controller AlterPartition %s isr=%s (changed %s) leaderEpoch=%d partitionEpoch=%d", id, prop.Kind,
		transcript.IDs(prop.ISR), transcript.IDs(prop.Changed), prop.LeaderEpoch, prop.PartitionEpoch)
	return out
}

// alterPartitionResponse is the controller's answer to the proposal: on
// success every replica takes the committed ISR, the leader from the
// answer and the followers from the PartitionChangeRecord (makeFollower
// in the same leader epoch).
func (s *ptScript) alterPartitionResponse(c *transcript.Cmd, touched map[int32]bool) transcript.Lines {
	code := c.Str("error", "NONE")
	id, l := s.leader(c)
	var out transcript.Lines
	if s.proposal == nil {
		out.Addf("no AlterPartition in flight")
		return out
	}
	prop := *s.proposal
	s.proposal = nil
	touched[id] = true
	if code != "NONE" {
		// Kafka's handleAlterPartitionError: a refusal that says the
		// change was not applied ends it; the committed ISR stands.
		l.ISRChangeRefused(errorCode(c, code))
		out.Addf("controller->%d AlterPartition error=%s", id, code)
		return out
	}
	pe := prop.PartitionEpoch + 1
	out.Addf("controller->%d AlterPartition isr=%s partitionEpoch=%d", id, transcript.IDs(prop.ISR), pe)
	moved, err := l.ApplyPartitionState(prop.ISR, pe, s.clock.Now())
	if err != nil {
		out.Addf("%d: %s", id, transcript.Err(err))
	}
	if moved {
		s.purgatory.CheckAndComplete(l)
	}
	for _, f := range s.ids {
		st := s.replicas[f].State()
		if f == id || st.Role != RoleFollower || st.LeaderID != id {
			continue
		}
		if _, err := s.replicas[f].MakeFollower(id, prop.LeaderEpoch, pe, st.Replicas, prop.ISR); err != nil {
			out.Addf("%d: %s", f, transcript.Err(err))
		}
		touched[f] = true
	}
	return out
}

func (s *ptScript) tick(c *transcript.Cmd) transcript.Lines {
	words := c.Words()
	if len(words) != 1 {
		c.Fatalf("tick D")
	}
	d, err := time.ParseDuration(words[0])
	if err != nil {
		c.Fatalf("%v", err)
	}
	s.clock.Advance(d)
	s.purgatory.Expire(s.clock.Now())
	var out transcript.Lines
	out.Addf("clock: %s", s.clock.At(s.clock.Now()))
	return out
}

// errorCode is the Kafka error code named name.
func errorCode(c *transcript.Cmd, name string) int16 {
	for code := int16(-1); code < 200; code++ {
		if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok && e.Message == name {
			return code
		}
	}
	c.Fatalf("unknown error %s", name)
	return 0
}
