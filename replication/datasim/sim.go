package datasim

import (
	"container/heap"
	"fmt"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/storage"
)

// Options shapes a run.
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

// Addresses on the simulated network.
const (
	controllerID int32 = 0
	producerID   int32 = 100
	topic              = "datasim"
)

var (
	brokerIDs = []int32{1, 2, 3}
	topicID   = [16]byte{0xda, 0x7a, 5, 1, 3}
	start     = time.Unix(1_700_000_000, 0)
)

// Timing of the modelled cluster, shortened from Kafka's defaults so that
// a run of a minute sees many ISR changes and elections.
const (
	replicaLagTimeMax = 2 * time.Second
	fetchWaitMax      = 300 * time.Millisecond
	socketTimeout     = 1 * time.Second
	fetchBackoff      = 200 * time.Millisecond
	sessionTimeout    = 1500 * time.Millisecond
	heartbeatInterval = 300 * time.Millisecond
	isrCheckInterval  = 500 * time.Millisecond
	produceTimeout    = 5 * time.Second
	quietSpell        = 15 * time.Second
)

func tpOf(idx int32) fetcher.TopicPartition {
	return fetcher.TopicPartition{Topic: topic, Partition: idx}
}

// Sim is one seeded run: three brokers, a modelled controller, a producer
// and a network, all stepped from one event queue on a virtual clock.
type Sim struct {
	opts Options
	// partitions is how many partitions the topic has.
	partitions int32
	rng        *rand.Rand
	now        time.Time
	queue      eventQueue
	seq        uint64
	events     int
	net        *network
	ctrl       *controller
	brokers    map[int32]*broker
	prod       *producer
	inv        *invariants
	err        error
	// flushPolicy is the replicas' log flush policy: FlushAlways (the
	// leader's group commit and the fetcher's flush before it
	// acknowledges) or FlushNever (a crash keeps what was written).
	flushPolicy storage.FlushPolicy
	// minISR is min.insync.replicas, 1 or 2.
	minISR int
	quiet  bool

	trace      hash.Hash64
	traceLines []string
}

// Run runs one seed to its end and returns the simulation (for its trace)
// and the first invariant it broke, if any.
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
	s := &Sim{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0xda7a5eed)), now: start,
		brokers: map[int32]*broker{}, trace: fnv.New64a(), partitions: int32(opts.Partitions)}
	// One seed in four flushes on write, one has min.insync.replicas 1;
	// decided by the seed's residue, not drawn, so that the same seed
	// makes the same draws whatever these options.
	s.flushPolicy, s.minISR = storage.FlushAlways, 2
	switch opts.Seed % 4 {
	case 0:
		s.flushPolicy = storage.FlushNever
	case 1:
		s.minISR = 1
	}
	s.record("flush policy %v, min.insync.replicas %d", s.flushPolicy, s.minISR)
	s.net = newNetwork(s)
	s.ctrl = newController(s)
	s.inv = newInvariants(s)
	for _, id := range brokerIDs {
		b := newBroker(s, id, filepath.Join(opts.Dir, fmt.Sprintf("broker-%d", id)))
		s.brokers[id] = b
		if err := b.start(); err != nil {
			return s, err
		}
	}
	s.ctrl.begin()
	s.prod = newProducer(s)
	s.scheduleFaults()
	end := start.Add(opts.Duration)
	s.at(end, "quiet spell", func() {
		s.quiet = true
		s.healAll()
	})
	s.runUntil(end.Add(quietSpell))
	if s.err == nil {
		s.inv.final()
	}
	s.shutdown()
	if s.err != nil {
		return s, fmt.Errorf("seed %d at %v (event %d): %w\ntrace tail:\n%s",
			opts.Seed, s.now.Sub(start), s.events, s.err, s.traceTail())
	}
	return s, nil
}

// TraceHash is a hash of every event (its time and kind) and every trace
// line of the run.
func (s *Sim) TraceHash() uint64 { return s.trace.Sum64() }

// Events is how many events ran.
func (s *Sim) Events() int { return s.events }

// Summary describes what the run exercised.
func (s *Sim) Summary() string {
	return fmt.Sprintf("%v, min.insync.replicas %d: %d events, %d produced, %d acknowledged, %d refused, %d failed, %d elections, %d ISR changes, %d crashes, %d truncations, high watermarks %v",
		s.flushPolicy, s.minISR, s.events, s.prod.sent, s.inv.ackedCount(), s.prod.refused, s.prod.failed, s.ctrl.elections, s.ctrl.isrChanges, s.inv.crashes, s.inv.truncations, s.inv.hwmSeen)
}

func (s *Sim) traceTail() string {
	var out []byte
	for _, l := range s.traceLines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return string(out)
}

// record adds a line to the trace, stamped with the virtual time.
func (s *Sim) record(format string, args ...any) {
	line := fmt.Sprintf("%9.3fs ", s.now.Sub(start).Seconds()) + fmt.Sprintf(format, args...)
	s.trace.Write([]byte(line))
	s.trace.Write([]byte{'\n'})
	s.traceLines = append(s.traceLines, line)
	if n := len(s.traceLines); n > 2*s.opts.TraceLines {
		s.traceLines = slices.Clone(s.traceLines[n-s.opts.TraceLines:])
	}
}

// fail stops the run at the first broken invariant.
func (s *Sim) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
		s.record("FAIL: %v", s.err)
	}
}

// runUntil runs events up to end, checking the invariants after each.
func (s *Sim) runUntil(end time.Time) {
	for s.queue.Len() > 0 && s.err == nil {
		e := heap.Pop(&s.queue).(*event)
		if e.at.After(end) {
			return
		}
		s.now = e.at
		s.events++
		// Every event counts in the trace hash, not only those traced.
		fmt.Fprintf(s.trace, "%d %s\n", s.now.Sub(start), e.what)
		e.fn()
		if s.err == nil {
			s.inv.check()
		}
	}
}

// pickPartition is a seeded partition index; with one partition it draws
// nothing, so that a one-partition run makes the draws it made before
// there could be more.
func (s *Sim) pickPartition() int32 {
	if s.partitions == 1 {
		return 0
	}
	return int32(s.rng.IntN(int(s.partitions)))
}

// jitter is a seeded duration in [lo, hi).
func (s *Sim) jitter(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)))
}

// shutdown closes every running replica's log.
func (s *Sim) shutdown() {
	for _, id := range brokerIDs {
		s.brokers[id].closeAll()
	}
}
