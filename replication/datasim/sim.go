package datasim

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/storage"
)

// Options shapes a run of Run.
type Options struct {
	// Seed decides the run.
	Seed uint64
	// Dir is where the brokers' log directories go.
	Dir string
	// Duration is how long the run lasts on the virtual clock, faults and
	// workload included; 0 means 60s. A quiet spell without faults follows
	// it, after which every replica must hold every acknowledged record.
	Duration time.Duration
	// Partitions is how many partitions the topic has, 1 to 3; 0 means
	// 2. Each prefers another leader, so that a follower fetches several
	// partitions from one leader in one request, or one partition while
	// it leads the other.
	Partitions int
	// TraceLines is how many of the last trace lines a failure shows; 0
	// means 60.
	TraceLines int
}

// Config places a data plane in a simulation: its brokers' and its
// producer's addresses, its topic and where the logs go.
type Config struct {
	// Brokers are the brokers' addresses; each hosts a replica of every
	// partition.
	Brokers []int32
	// Producer is the acks=all producer's address.
	Producer int32
	// Topic, TopicID and Partitions name the topic replicated.
	Topic      string
	TopicID    [16]byte
	Partitions int32
	// Dir is where the brokers' log directories go.
	Dir string
	// FlushPolicy is the replicas' log flush policy: FlushAlways (the
	// leader's group commit and the fetcher's flush before it
	// acknowledges) or FlushNever (a crash keeps what was written).
	FlushPolicy storage.FlushPolicy
	// MinInsyncReplicas is the topic's min.insync.replicas.
	MinInsyncReplicas int
}

// Addresses on Run's network.
const (
	controllerID int32 = 0
	producerID   int32 = 100
)

var start = time.Unix(1_700_000_000, 0)

// Timing of the data plane, shortened from Kafka's defaults so that a run
// of a minute sees many ISR changes and elections.
const (
	replicaLagTimeMax = 2 * time.Second
	fetchWaitMax      = 300 * time.Millisecond
	socketTimeout     = 1 * time.Second
	fetchBackoff      = 200 * time.Millisecond
	isrCheckInterval  = 500 * time.Millisecond
	produceTimeout    = 5 * time.Second
	quietSpell        = 15 * time.Second
)

func (s *Sim) tpOf(idx int32) fetcher.TopicPartition {
	return fetcher.TopicPartition{Topic: s.cfg.Topic, Partition: idx}
}

// Sim is the data plane of one topic: its brokers' replicas, a producer
// and the invariants, stepped from an Env's event queue and answering to
// a Controller. Run makes one with a modelled controller on an Env of its
// own; NewDataPlane places one in another simulation.
type Sim struct {
	cfg  Config
	env  Env
	ctrl Controller
	rng  *rand.Rand

	brokers map[int32]*broker
	prod    *producer
	inv     *invariants
	err     error
	quiet   bool

	// Run's own: its env and modelled controller, and what the modelled
	// controller's side of a starting broker does.
	own     *ownEnv
	model   *controller
	onStart func(*broker)
}

// NewDataPlane places a data plane in env, answering to ctrl. Its brokers
// are down until Start; the producer and the consumer reads begin at once.
func NewDataPlane(env Env, ctrl Controller, cfg Config) (*Sim, error) {
	if cfg.Partitions < 1 || cfg.Partitions > 3 {
		return nil, fmt.Errorf("datasim: %d partitions: want 1-3", cfg.Partitions)
	}
	s := &Sim{cfg: cfg, env: env, ctrl: ctrl, rng: env.Rand(), brokers: map[int32]*broker{}}
	s.record("data plane: topic %s with %d partitions on brokers %v, flush policy %v, min.insync.replicas %d",
		cfg.Topic, cfg.Partitions, cfg.Brokers, cfg.FlushPolicy, cfg.MinInsyncReplicas)
	s.inv = newInvariants(s)
	for _, id := range cfg.Brokers {
		s.brokers[id] = newBroker(s, id, filepath.Join(cfg.Dir, fmt.Sprintf("broker-%d", id)))
	}
	s.prod = newProducer(s)
	return s, nil
}

// Run runs one seed to its end with a modelled controller and returns the
// simulation (for its trace) and the first invariant it broke, if any.
func Run(opts Options) (*Sim, error) {
	if opts.Duration == 0 {
		opts.Duration = 60 * time.Second
	}
	if opts.TraceLines == 0 {
		opts.TraceLines = 60
	}
	if opts.Partitions == 0 {
		opts.Partitions = 2
	}
	if opts.Partitions < 1 || opts.Partitions > 3 {
		return nil, fmt.Errorf("datasim: %d partitions: want 1-3", opts.Partitions)
	}
	env := newOwnEnv(opts.Seed, opts.TraceLines)
	cfg := Config{Brokers: []int32{1, 2, 3}, Producer: producerID, Topic: "datasim", TopicID: [16]byte{0xda, 0x7a, 5, 1, 3},
		Partitions: int32(opts.Partitions), Dir: opts.Dir, FlushPolicy: storage.FlushAlways, MinInsyncReplicas: 2}
	// One seed in four flushes on write, one has min.insync.replicas 1;
	// decided by the seed's residue, not drawn, so that the same seed
	// makes the same draws whatever these options.
	switch opts.Seed % 4 {
	case 0:
		cfg.FlushPolicy = storage.FlushNever
	case 1:
		cfg.MinInsyncReplicas = 1
	}
	model := newController(env, cfg)
	s, err := NewDataPlane(env, model, cfg)
	if err != nil {
		return nil, err
	}
	s.own, s.model, s.onStart = env, model, model.started
	model.s = s
	for _, id := range cfg.Brokers {
		if err := s.Start(id); err != nil {
			return s, err
		}
	}
	model.begin()
	s.scheduleFaults()
	end := start.Add(opts.Duration)
	env.at(end, "quiet spell", func() {
		s.Quiet()
		s.healAll()
	})
	env.runUntil(end.Add(quietSpell), s.check)
	if s.err == nil {
		s.final()
	}
	s.Close()
	if s.err != nil {
		return s, fmt.Errorf("seed %d at %v (event %d): %w\ntrace tail:\n%s",
			opts.Seed, env.now.Sub(start), env.events, s.err, env.traceTail())
	}
	return s, nil
}

// TraceHash is a hash of every event (its time and kind) and every trace
// line of a run of Run.
func (s *Sim) TraceHash() uint64 { return s.own.trace.Sum64() }

// Events is how many events a run of Run ran.
func (s *Sim) Events() int { return s.own.events }

// Summary describes what the run exercised.
func (s *Sim) Summary() string {
	out := fmt.Sprintf("%v, min.insync.replicas %d: %d produced, %d acknowledged, %d refused, %d failed, %d crashes (%d torn tails), %d truncations, high watermarks %v",
		s.cfg.FlushPolicy, s.cfg.MinInsyncReplicas, s.prod.sent, s.inv.ackedCount(), s.prod.refused, s.prod.failed, s.inv.crashes, s.inv.tornTails, s.inv.truncations, s.inv.hwmSeen)
	if s.own != nil {
		out += fmt.Sprintf("; %d events, %d elections, %d ISR changes", s.own.events, s.model.elections, s.model.isrChanges)
	}
	return out
}

// now is the virtual time.
func (s *Sim) now() time.Time { return s.env.Now() }

// after schedules fn d from now.
func (s *Sim) after(d time.Duration, what string, fn func()) { s.env.After(d, what, fn) }

// at schedules fn at t (at once if t is past).
func (s *Sim) at(t time.Time, what string, fn func()) { s.env.After(max(t.Sub(s.now()), 0), what, fn) }

// record adds a line to the trace.
func (s *Sim) record(format string, args ...any) { s.env.Record(fmt.Sprintf(format, args...)) }

// fail stops the run at the first broken invariant.
func (s *Sim) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
		s.record("FAIL: %v", s.err)
		s.env.Fail(s.err)
	}
}

// send carries a message between two addresses; it is lost if it is sent
// to a stopped broker, or if either end's incarnation changed before it
// lands (its connection died with the old one).
func (s *Sim) send(from, to int32, what string, deliver func()) {
	fromInc, _ := s.incarnation(from)
	toInc, up := s.incarnation(to)
	if !up {
		return
	}
	s.env.Send(from, to, what, func() {
		fi, _ := s.incarnation(from)
		ti, up := s.incarnation(to)
		if fi == fromInc && ti == toInc && up {
			deliver()
		}
	})
}

// incarnation is an address's current incarnation, and whether it runs;
// an address that is not a broker always runs.
func (s *Sim) incarnation(id int32) (int, bool) {
	if b, ok := s.brokers[id]; ok {
		return b.incarnation, b.up
	}
	return 0, true
}

// pickPartition is a seeded partition index; with one partition it draws
// nothing, so that a one-partition run makes the draws it made before
// there could be more.
func (s *Sim) pickPartition() int32 {
	if s.cfg.Partitions == 1 {
		return 0
	}
	return int32(s.rng.IntN(int(s.cfg.Partitions)))
}

// jitter is a seeded duration in [lo, hi).
func (s *Sim) jitter(lo, hi time.Duration) time.Duration { return jitter(s.rng, lo, hi) }

func jitter(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}
