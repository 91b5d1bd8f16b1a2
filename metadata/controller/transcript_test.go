package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/internal/transcript"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTranscripts runs the controller's stories of testdata/transcripts:
// the script plays the metadata quorum (a raft that commits the
// controller's batches one at a time, in order) and the brokers (their
// requests), and prints what the controller did. Rewrite the expected
// outputs with
//
//	go test ./metadata/controller/ -run TestTranscripts -rewrite
//
// The command language (brokers are named by id, partitions as topic-N):
//
//	start [session-timeout=9s] [unclean-interval=5m] [replica-log-info]
//	      [elr] [min-isr=N]
//	    starts a controller (node 1) on an empty log; replica-log-info
//	    gives it Config.ReplicaLogInfo, answered from the replica-logs table;
//	    elr bootstraps eligible.leader.replicas.version=1; min-isr is its
//	    own min.insync.replicas.
//	lead epoch=E | follow leader=N epoch=E
//	    the quorum's leader changes to this node, or to another.
//	register ID... [incarnation=N] [dirs=(d101,d101b)] [cluster=ID] [clean]
//	    BrokerRegistration; a broker's one log directory is d<ID> unless
//	    dirs says otherwise; clean names the epoch the broker last
//	    registered with as PreviousBrokerEpoch (its clean shutdown file).
//	heartbeat ID... [offset=N] [want-fence] [want-shutdown] [epoch=N]
//	    BrokerHeartbeat, at the committed offset unless offset says.
//	create-topic NAME [partitions=N] [rf=N] [p0=(101,102) p1=(...)]
//	      [config=(key=value ...)]
//	    CreateTopics, placed by the controller or by the p<i> lists.
//	alter-partition LEADER TOPIC-P isr=(...) [leader-epoch=E]
//	      [partition-epoch=E] [broker-epoch=E] [member-epochs=(102=E)]
//	      [recovering] [version=2]
//	    AlterPartition (v3 with the members' broker epochs), at the
//	    partition's committed epochs unless told.
//	assign-dirs ID TOPIC-P... dir=NAME|LOST [broker-epoch=E]
//	    AssignReplicasToDirs.
//	alter-config TOPIC|cluster key=value...
//	    IncrementalAlterConfigs SET, of a topic or the cluster default.
//	reassign TOPIC-P... replicas=(...)|cancel [no-rf-change]
//	    AlterPartitionReassignments: the partitions to the replicas, or
//	    their reassignments cancelled; no-rf-change is v1 refusing a
//	    changed replication factor.
//	list-reassignments [TOPIC-P...]
//	    ListPartitionReassignments: every one, or of those partitions.
//	replica-logs ID=(epoch=E end=N)|ID=down...
//	    what the brokers answer the recovery election's ReplicaLogInfo.
//	tick D [keep-alive=(101,102)]
//	    runs the clock D, stopping at each of the controller's timers
//	    (session scan, unclean and recovery elections); the brokers kept
//	    alive heartbeat every 2s meanwhile, caught up.
//	state         the committed brokers and partitions.
//	placement T   what the random placement of topic T guarantees.
//
// After each command the script commits what the controller appended and
// prints, in order, the records as they commit (@offset), the events the
// controller reported, the ReplicaLogInfo calls and the response.
func TestTranscripts(t *testing.T) {
	transcript.Walk(t, "testdata/transcripts", func(t *testing.T) transcript.Script {
		s := &txScript{t: t, clock: transcript.NewClock(time.Unix(1_700_000_000, 0)), dirs: map[string]record.Uuid{}}
		t.Cleanup(s.close)
		return s.run
	})
}

// txScript is one story's state.
type txScript struct {
	t     *testing.T
	clock *transcript.Clock
	raft  *txRaft
	ctl   *QuorumController
	// epochs are the broker epochs the registrations answered.
	epochs map[int32]int64
	dirs   map[string]record.Uuid
	// placed are the topics placed at random: their partition records
	// print without the replicas.
	placed map[string]bool
	names  map[record.Uuid]string

	mu sync.Mutex
	// timeline is what happened since the last print, in order.
	timeline transcript.Lines
	logs     map[int32]*LogInfo // nil: the broker does not answer
}

func (s *txScript) close() {
	if s.ctl != nil {
		s.ctl.Close()
	}
}

func (s *txScript) note(format string, args ...any) {
	s.mu.Lock()
	s.timeline.Addf(format, args...)
	s.mu.Unlock()
}

// take returns the timeline and empties it.
func (s *txScript) take() transcript.Lines {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.timeline
	s.timeline = nil
	return out
}

func (s *txScript) run(c *transcript.Cmd) string {
	c.T.Helper()
	if c.Name() != "start" && s.ctl == nil {
		c.Fatalf("start first")
	}
	var out transcript.Lines
	switch c.Name() {
	case "start":
		s.start(c)
	case "lead":
		epoch := c.MustInt32("epoch")
		s.raft.lead(epoch)
		s.ctl.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 1, Epoch: epoch})
	case "follow":
		leader, epoch := c.MustInt32("leader"), c.MustInt32("epoch")
		s.raft.fail(epoch, fmt.Errorf("epoch %d: %w", epoch, quorum.ErrNotLeader))
		s.ctl.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: leader, Epoch: epoch})
	case "register":
		return s.register(c)
	case "heartbeat":
		return s.heartbeat(c)
	case "create-topic":
		return s.createTopic(c)
	case "alter-partition":
		return s.alterPartition(c)
	case "assign-dirs":
		return s.assignDirs(c)
	case "alter-config":
		return s.alterConfig(c)
	case "reassign":
		return s.reassign(c)
	case "list-reassignments":
		return s.listReassignments(c)
	case "replica-logs":
		s.replicaLogs(c)
		return ""
	case "tick":
		return s.tick(c)
	case "state":
		return s.state()
	case "placement":
		return s.placement(c)
	default:
		c.Fatalf("unknown command %q", c.Name())
	}
	s.settle()
	out = append(out, s.take()...)
	return out.String()
}

func (s *txScript) start(c *transcript.Cmd) {
	if s.ctl != nil {
		c.Fatalf("one controller per story")
	}
	cfg := Config{
		NodeID: 1, ClusterID: testCluster,
		SessionTimeout:          c.Dur("session-timeout", 0),
		UncleanElectionInterval: c.Dur("unclean-interval", 0),
		MinInsyncReplicas:       int(c.Int("min-isr", 0)),
		Clock:                   s.clock.Now,
		OnEvent:                 func(e Event) { s.note("%s", s.eventLine(e)) },
	}
	if c.Has("elr") {
		cfg.EligibleLeaderReplicasVersion = record.EligibleLeaderReplicasOn
	}
	if c.Has("replica-log-info") {
		cfg.ReplicaLogInfo = s.replicaLogInfo
	}
	s.epochs, s.placed, s.names = map[int32]int64{}, map[string]bool{}, map[record.Uuid]string{}
	s.raft = &txRaft{s: s, epoch: -1, img: image.Empty}
	ctl, err := newController(cfg, s.raft.append)
	if err != nil {
		c.Fatalf("%v", err)
	}
	s.ctl = ctl
	ctl.HandleCommittedImage(image.Empty)
}

// onLoop runs f on the controller's loop and waits for it.
func (s *txScript) onLoop(f func()) {
	s.t.Helper()
	done := make(chan struct{})
	if !s.ctl.box.post(func() { f(); close(done) }) {
		s.t.Fatal("controller closed")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.t.Fatal("the controller's loop did not run")
	}
}

// settle commits what the controller appends, one batch at a time, until
// it is idle: nothing pending, no recovery election asking, across two
// rounds of its loop (timers run after each round's events).
func (s *txScript) settle() {
	s.t.Helper()
	quiet := 0
	poll.Until(s.t, 30*time.Second, "the controller to settle", func() bool {
		if c, ok := s.raft.commitOne(); ok {
			quiet = 0
			s.waitTaken(c)
			return false
		}
		idle := false
		s.onLoop(func() { idle = len(s.ctl.st.pending) == 0 && len(s.ctl.st.recovering) == 0 })
		if !idle {
			quiet = 0
			return false
		}
		quiet++
		return quiet >= 2
	})
	if bad := s.raft.problems(); len(bad) > 0 {
		s.t.Fatalf("the controller's records: %s", strings.Join(bad, "; "))
	}
}

// waitTaken waits until the controller has taken a committed batch: its
// events are reported and its waiters answered.
func (s *txScript) waitTaken(c *fakeCommit) {
	s.t.Helper()
	poll.Until(s.t, 10*time.Second, "the controller to take its commit", func() bool {
		taken := true
		s.onLoop(func() {
			for _, b := range s.ctl.st.pending {
				if b.commit == commit(c) {
					taken = false
				}
			}
		})
		return taken
	})
}

// send hands the controller a request and returns its response once the
// controller settled.
func (s *txScript) send(c *transcript.Cmd, req kmsg.Request) kmsg.Response {
	c.T.Helper()
	ch := make(chan kmsg.Response, 1)
	if !s.ctl.box.post(func() { s.ctl.handle(req, func(r kmsg.Response) { ch <- r }) }) {
		c.Fatalf("controller closed")
	}
	s.settle()
	select {
	case r := <-ch:
		return r
	default:
		c.Fatalf("%s: no response once the controller settled", kmsg.NameForKey(req.Key()))
		return nil
	}
}

func (s *txScript) committedOffset() int64 {
	return s.raft.image().Provenance().LastContainedOffset
}

// heartbeatInterval is broker.heartbeat.interval.ms's default: how often
// the brokers a tick keeps alive heartbeat.
const heartbeatInterval = 2 * time.Second

func (s *txScript) tick(c *transcript.Cmd) string {
	alive, _ := c.IDs("keep-alive")
	words := c.Words()
	if len(words) != 1 {
		c.Fatalf("tick D [keep-alive=(...)]")
	}
	d, err := time.ParseDuration(words[0])
	if err != nil {
		c.Fatalf("%v", err)
	}
	var out transcript.Lines
	end := s.clock.Now().Add(d)
	nextBeat := s.clock.Now().Add(heartbeatInterval)
	for range 100_000 {
		dl := s.nextDeadline()
		beat := len(alive) > 0 && (dl.IsZero() || !nextBeat.After(dl))
		if beat {
			dl = nextBeat
		}
		if dl.IsZero() || dl.After(end) {
			break
		}
		s.clock.Set(dl)
		if beat {
			// The responses are not printed, what they change is.
			nextBeat = nextBeat.Add(heartbeatInterval)
			for _, id := range alive {
				s.send(c, heartbeat(id, s.epochs[id], s.committedOffset()))
			}
		}
		s.onLoop(func() {}) // a round of the loop, whose timers then run
		s.settle()
		if got := s.take(); len(got) > 0 {
			out.Addf("at %s:", s.clock.At(s.clock.Now()))
			out = append(out, got...)
		}
	}
	s.clock.Set(end)
	s.onLoop(func() {})
	s.settle()
	out = append(out, s.take()...)
	out.Addf("clock: %s", s.clock.At(s.clock.Now()))
	return out.String()
}

// nextDeadline is the controller's next timer, zero when it is inactive.
func (s *txScript) nextDeadline() time.Time {
	var dl time.Time
	s.onLoop(func() {
		st := &s.ctl.st
		if !st.active {
			return
		}
		dl = st.nextFenceScan
		for _, t := range []time.Time{st.nextUnclean, st.nextRecovery} {
			if t.Before(dl) {
				dl = t
			}
		}
		if s.ctl.cfg.NoOpInterval > 0 && st.nextNoOp.Before(dl) {
			dl = st.nextNoOp
		}
	})
	return dl
}

// dir is the uuid of a log directory named in the script.
func (s *txScript) dir(name string) record.Uuid {
	switch name {
	case "LOST":
		return record.DirectoryLost
	case "UNASSIGNED":
		return record.DirectoryUnassigned
	case "MIGRATING":
		return record.DirectoryMigrating
	}
	u, ok := s.dirs[name]
	if !ok {
		u = record.NewUuid(uint64(1000+len(s.dirs)), 7777)
		s.dirs[name] = u
	}
	return u
}

func (s *txScript) dirName(u record.Uuid) string {
	switch u {
	case record.DirectoryLost:
		return "LOST"
	case record.DirectoryUnassigned:
		return "UNASSIGNED"
	case record.DirectoryMigrating:
		return "MIGRATING"
	}
	for name, v := range s.dirs {
		if v == u {
			return name
		}
	}
	return u.String()
}

func brokerIDs(c *transcript.Cmd, words []string) []int32 {
	c.T.Helper()
	ids, err := transcript.ParseIDs(words)
	if err != nil || len(ids) == 0 {
		c.Fatalf("want broker ids, got %v", words)
	}
	return ids
}

// partitionArg reads topic-N against the committed image; an unknown
// topic gets an id no topic has.
func (s *txScript) partitionArg(c *transcript.Cmd, name string) (record.Uuid, string, int32) {
	c.T.Helper()
	i := strings.LastIndexByte(name, '-')
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if i <= 0 || err != nil {
		c.Fatalf("want topic-N, got %q", name)
	}
	topic := name[:i]
	if t := s.raft.image().Topics().TopicByName(topic); t != nil {
		return t.ID(), topic, int32(p)
	}
	return record.NewUuid(0xdead, 0xbeef), topic, int32(p)
}

func (s *txScript) replicaLogs(c *transcript.Cmd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs == nil {
		s.logs = map[int32]*LogInfo{}
	}
	for _, a := range c.Rest() {
		id, err := strconv.ParseInt(a.Key, 10, 32)
		if err != nil {
			c.Fatalf("want ID=(epoch=E end=N), got %s", a.String())
		}
		if len(a.Vals) == 1 && a.Vals[0] == "down" {
			s.logs[int32(id)] = nil
			continue
		}
		f, err := transcript.ParseFields(a.Vals)
		epoch, err1 := strconv.ParseInt(f["epoch"], 10, 32)
		end, err2 := strconv.ParseInt(f["end"], 10, 64)
		if err != nil || err1 != nil || err2 != nil || len(f) != 2 {
			c.Fatalf("want ID=(epoch=E end=N), got %s", a.String())
		}
		s.logs[int32(id)] = &LogInfo{LastEpoch: int32(epoch), LogEndOffset: end}
	}
}

// replicaLogInfo is Config.ReplicaLogInfo answered from the table.
func (s *txScript) replicaLogInfo(_ context.Context, broker int32, topic string, partition int32) (LogInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logs[broker]
	if l == nil {
		s.timeline.Addf("ReplicaLogInfo %d %s-%d: no answer", broker, topic, partition)
		return LogInfo{}, errors.New("no answer")
	}
	s.timeline.Addf("ReplicaLogInfo %d %s-%d: lastEpoch=%d logEnd=%d", broker, topic, partition, l.LastEpoch, l.LogEndOffset)
	return *l, nil
}
