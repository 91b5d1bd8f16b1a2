package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/kraftlab/kraftlab/metadata/metasim"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/datasim"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Options shapes a run.
type Options struct {
	// Seed decides the run.
	Seed uint64
	// Dir is where the brokers' log folders go.
	Dir string
	// Faults is how many faults the run injects; 0 means 12.
	Faults int
	// TraceLines keeps the trace's and the transcript's tails for error
	// messages.
	TraceLines int
}

// topic is the topic the producer writes, outside the clients' pool of
// names, so that they never delete it.
const topic = "datasim"

// producer is the producer's address.
const producer int32 = 210

// Sim is one run: metasim's cluster with a data plane on its brokers.
type Sim struct {
	ms *metasim.Sim
	dp *datasim.Sim
}

// Summary describes what the run exercised.
func (s *Sim) Summary() string {
	out := fmt.Sprintf("%d events", s.ms.Events())
	if s.dp != nil {
		out += "; " + s.dp.Summary()
	}
	return out
}

// TraceHash identifies the run: the same seed gives the same hash.
func (s *Sim) TraceHash() uint64 { return s.ms.TraceHash() }

// Events is the number of events processed.
func (s *Sim) Events() int { return s.ms.Events() }

// Transcript is the tail of what the metadata layer and the data plane
// did, line by line.
func (s *Sim) Transcript() []string { return s.ms.Transcript() }

// Trace is the tail of the trace, the quorum's messages included.
func (s *Sim) Trace() []string { return s.ms.Trace() }

// Shape is what a run draws from its seed, and a playground picks.
type Shape struct {
	Replication            raft.Replication
	EligibleLeaderReplicas bool
	AutoLeaderRebalance    bool
	SessionTimeout         time.Duration
	HeartbeatInterval      time.Duration
	// Partitions is the producer's topic's partition count.
	Partitions        int32
	FlushPolicy       storage.FlushPolicy
	MinInsyncReplicas int
}

// draw picks a run's shape.
func draw(r *rand.Rand) Shape {
	sh := Shape{
		Replication:            []raft.Replication{raft.Pull, raft.Push}[r.IntN(2)],
		EligibleLeaderReplicas: r.IntN(2) == 0,
		AutoLeaderRebalance:    r.IntN(2) == 0,
		SessionTimeout:         time.Duration(3000+r.IntN(3000)) * time.Millisecond,
		HeartbeatInterval:      time.Duration(200+r.IntN(600)) * time.Millisecond,
		Partitions:             int32(1 + r.IntN(3)),
		FlushPolicy:            storage.FlushAlways,
		MinInsyncReplicas:      2,
	}
	if r.IntN(4) == 0 {
		sh.FlushPolicy = storage.FlushNever
	}
	if r.IntN(4) == 0 {
		sh.MinInsyncReplicas = 1
	}
	return sh
}

// Run runs one seed: the cluster starts, the topic is created, and the
// producer writes while the clients churn other topics and faults come;
// then everything heals, and the cluster must settle with every
// acknowledged batch on every broker. The invariants of both layers are
// checked after every event.
func Run(opts Options) (*Sim, error) {
	if opts.Faults == 0 {
		opts.Faults = 12
	}
	r := rand.New(rand.NewPCG(opts.Seed, 0x636c7573))
	s, err := Start(opts, draw(r), nil)
	if s == nil || err != nil {
		return s, err
	}
	ms, dp := s.ms, s.dp
	defer dp.Close()

	ms.StartWorkload(r)
	if err := ms.RunFor(5 * time.Second); err != nil {
		return s, err
	}
	for range opts.Faults {
		ms.RandomFault(r)
		if err := ms.RunFor(time.Duration(500+r.IntN(4500)) * time.Millisecond); err != nil {
			return s, err
		}
	}
	ms.StopWorkload()
	dp.Quiet()
	if err := ms.HealAndSettle(60 * time.Second); err != nil {
		return s, err
	}
	if err := ms.RunUntil(dp.Settled, 60*time.Second); err != nil {
		return s, fmt.Errorf("liveness after healing: the topic's ISRs never filled: %w", err)
	}
	// The followers fetch what they lack within a few fetches.
	if err := ms.RunFor(5 * time.Second); err != nil {
		return s, err
	}
	return s, dp.Final()
}

// Start builds the cluster of shape sh and runs it until every broker is
// registered and the producer's topic is created and led, with the data
// plane on the brokers; the producer then writes. tune, if set, adjusts
// metasim's options first (a playground listens to the raft events). The
// caller closes the data plane (Close).
func Start(opts Options, sh Shape, tune func(*metasim.Options)) (*Sim, error) {
	mo := metasim.Options{
		Seed:                   opts.Seed,
		Brokers:                3,
		Replication:            sh.Replication,
		EligibleLeaderReplicas: sh.EligibleLeaderReplicas,
		// Unclean elections may lose acknowledged records by design: the
		// data plane's invariants hold only without them.
		UncleanLeaderElection: false,
		AutoLeaderRebalance:   sh.AutoLeaderRebalance,
		SessionTimeout:        sh.SessionTimeout,
		HeartbeatInterval:     sh.HeartbeatInterval,
		TraceLines:            opts.TraceLines,
		Endpoints:             []int32{producer},
		NoModelledISR:         true,
	}
	if tune != nil {
		tune(&mo)
	}
	cfg := datasim.Config{Producer: producer, Topic: topic, Partitions: sh.Partitions, Dir: opts.Dir,
		FlushPolicy: sh.FlushPolicy, MinInsyncReplicas: sh.MinInsyncReplicas}
	s := &Sim{}
	mo.Check = func() error {
		if s.dp == nil {
			return nil
		}
		return s.dp.Check()
	}
	ms, err := metasim.New(mo)
	if err != nil {
		return nil, err
	}
	s.ms = ms
	ms.Record(fmt.Sprintf("cluster sim: %v, elr %v, rebalance %v, session %v, heartbeat %v, %d partitions",
		mo.Replication, mo.EligibleLeaderReplicas, mo.AutoLeaderRebalance, mo.SessionTimeout, mo.HeartbeatInterval, cfg.Partitions))
	cfg.Brokers = ms.BrokerIDs()
	id, err := s.createTopic(cfg)
	if err != nil {
		return s, err
	}
	cfg.TopicID = id
	ctl := &controller{ms: ms, topicID: id}
	dp, err := datasim.NewDataPlane(&env{ms: ms}, ctl, cfg)
	if err != nil {
		return s, err
	}
	s.dp = dp
	ms.AttachDataPlane(&brokers{dp: dp, topicID: id, parts: cfg.Partitions})
	return s, nil
}

// Meta is the metadata layer's simulation: the controllers, the brokers'
// lifecycles and loaders, the quorum underneath.
func (s *Sim) Meta() *metasim.Sim { return s.ms }

// Data is the brokers' data plane.
func (s *Sim) Data() *datasim.Sim { return s.dp }

// createTopic runs until every broker is registered and unfenced, then
// creates the producer's topic on all of them with its
// min.insync.replicas, and runs until it is committed.
func (s *Sim) createTopic(cfg datasim.Config) (record.Uuid, error) {
	ms := s.ms
	ready := func() bool {
		cl := ms.Committed().Cluster()
		for _, id := range cfg.Brokers {
			if b := cl.Broker(id); b == nil || b.Fenced {
				return false
			}
		}
		return true
	}
	if err := ms.RunUntil(ready, 30*time.Second); err != nil {
		return record.Uuid{}, fmt.Errorf("brokers never all registered: %w", err)
	}
	code := int16(-2)
	ms.CreateTopic(topic, cfg.Partitions, int16(len(cfg.Brokers)), func(c int16) { code = c },
		metasim.TopicConfig{Name: "min.insync.replicas", Value: strconv.Itoa(cfg.MinInsyncReplicas)})
	if err := ms.RunUntil(func() bool { return code != -2 }, 30*time.Second); err != nil {
		return record.Uuid{}, err
	}
	if code != 0 {
		return record.Uuid{}, fmt.Errorf("create topic %s: code %d", topic, code)
	}
	t := ms.Committed().Topics().TopicByName(topic)
	if t == nil {
		return record.Uuid{}, errors.New("topic acknowledged but not committed")
	}
	return t.ID(), nil
}
