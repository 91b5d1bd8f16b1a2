package datasim

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/storage"
)

// broker is one broker of the data plane: its replicas of the topic's
// partitions (the real partition.Partition on a real log directory), the
// real fetcher state machines when it follows, and the leader side of
// Fetch, ListOffsets and Produce. A crash cuts each log to its flushed
// offset and ends the incarnation: timers and answers meant for it are
// dropped.
type broker struct {
	s           *Sim
	id          int32
	dir         string
	incarnation int
	up          bool
	epoch       int64    // registered broker epoch, -1 before
	md          Metadata // the metadata applied
	hosts       []*host  // by partition index

	produces, fetches *partition.Purgatory[*partition.Partition]
	// loops are the fetcher threads, by source broker (one fetcher per
	// source, num.replica.fetchers=1: every partition of a leader shares
	// its requests).
	loops     map[int32]*followLoop
	isrTokens int
}

// host is the broker's replica of one partition and what the broker keeps
// beside it.
type host struct {
	idx int32
	p   *partition.Partition
	// hwmCheckpoint is the high watermark last checkpointed (Kafka's
	// replication-offset-checkpoint), which a restart starts from.
	hwmCheckpoint int64
	flushPending  bool
	isrInflight   int // token of the AlterPartition out, 0 if none
	// isrProp is the ISR change pending, to be sent (again) until it is
	// answered or the metadata ends it.
	isrProp                     *partition.Proposal
	fetchingFrom, fetchingEpoch int32
}

func newBroker(s *Sim, id int32, dir string) *broker {
	b := &broker{s: s, id: id, dir: dir, loops: map[int32]*followLoop{}}
	for i := range s.cfg.Partitions {
		b.hosts = append(b.hosts, &host{idx: i, fetchingFrom: -1, fetchingEpoch: -1})
	}
	return b
}

// Start starts broker id's new incarnation: it opens the replicas,
// recovering what a crash left. It hosts nothing until it has its
// registration (SetBrokerEpoch) and metadata that holds it (Apply).
func (s *Sim) Start(id int32) error {
	b := s.brokers[id]
	if b == nil {
		return fmt.Errorf("datasim: no broker %d", id)
	}
	if b.up {
		return nil
	}
	if err := b.start(); err != nil {
		s.fail("start broker %d: %v", id, err)
		return err
	}
	return nil
}

// Stop stops broker id: crashed, each log keeps what it flushed;
// otherwise every log is flushed and closed, as a graceful shutdown does.
func (s *Sim) Stop(id int32, crashed bool) {
	b := s.brokers[id]
	if b == nil || !b.up {
		return
	}
	if crashed {
		b.crash()
		return
	}
	b.shutdown()
}

// SetBrokerEpoch tells broker id the epoch its registration got, -1 when
// it must register again.
func (s *Sim) SetBrokerEpoch(id int32, epoch int64) {
	if b := s.brokers[id]; b != nil && b.up {
		b.epoch = epoch
	}
}

// Apply hands broker id the metadata its loader published.
func (s *Sim) Apply(id int32, md Metadata) {
	if b := s.brokers[id]; b != nil {
		b.applyMetadata(md)
	}
}

// start opens the replicas (recovering what a crash left) and begins the
// incarnation's timers.
func (b *broker) start() error {
	b.incarnation++
	b.epoch, b.md = -1, Metadata{}
	b.produces, b.fetches = partition.NewPurgatory[*partition.Partition](), partition.NewPurgatory[*partition.Partition]()
	cfg := b.s.cfg
	for _, h := range b.hosts {
		h.flushPending, h.isrInflight, h.isrProp, h.fetchingFrom, h.fetchingEpoch = false, 0, nil, -1, -1
		p, err := partition.New(partition.Config{
			Topic: cfg.Topic, TopicID: cfg.TopicID, Partition: h.idx, Dir: b.dir, LocalBrokerID: b.id,
			Log:               storage.Options{FlushPolicy: cfg.FlushPolicy, SegmentBytes: 16 << 10, Disk: noSyncDisk{}},
			MinInsyncReplicas: cfg.MinInsyncReplicas, ReplicaLagTimeMax: replicaLagTimeMax, HighWatermark: h.hwmCheckpoint,
			ReplicaEligible: func(id int32) bool { return b.md.Version > 0 && !b.md.Fenced[id] },
			AliveBrokerEpoch: func(id int32) (int64, bool) {
				e, ok := b.md.BrokerEpochs[id]
				return e, ok && !b.md.Fenced[id]
			},
			Now: b.s.now,
		})
		if err != nil {
			return fmt.Errorf("broker %d: %w", b.id, err)
		}
		h.p = p
		b.s.record("broker %d starts p%d (incarnation %d): log end %d, high watermark %d", b.id, h.idx, b.incarnation, p.LogEndOffset(), p.HighWatermark())
	}
	b.up = true
	if b.s.onStart != nil {
		b.s.onStart(b)
	}
	b.every(isrCheckInterval, "isr check", func() {
		for _, h := range b.hosts {
			b.maybeChangeISR(h)
		}
	})
	b.every(time.Second, "hwm checkpoint", func() {
		for _, h := range b.hosts {
			h.hwmCheckpoint = h.p.HighWatermark()
		}
	})
	return nil
}

// crash kills the broker: each log keeps what was flushed.
func (b *broker) crash() {
	for _, h := range b.hosts {
		if err := h.p.Crash(); err != nil {
			b.s.fail("broker %d crash: %v", b.id, err)
		}
		b.s.record("broker %d crashes: p%d log end %d, high watermark %d", b.id, h.idx, h.p.LogEndOffset(), h.p.HighWatermark())
		// Now and then the crash comes in the middle of a write.
		if b.s.rng.IntN(3) == 0 {
			n, file, err := tearTail(b.s.rng, h.p.Dir())
			if err != nil {
				b.s.fail("broker %d p%d torn tail: %v", b.id, h.idx, err)
			}
			if n > 0 {
				b.s.record("broker %d p%d: %d torn bytes after the flushed end of %s", b.id, h.idx, n, file)
				b.s.inv.tornTails++
			}
		}
	}
	b.stopped()
	b.s.inv.crashes++
}

// shutdown stops the broker gracefully: every log flushed and closed, the
// high watermarks checkpointed.
func (b *broker) shutdown() {
	for _, h := range b.hosts {
		h.hwmCheckpoint = h.p.HighWatermark()
		if err := h.p.Close(); err != nil {
			b.s.fail("broker %d close p%d: %v", b.id, h.idx, err)
		}
		b.s.record("broker %d shuts down: p%d log end %d, high watermark %d", b.id, h.idx, h.p.LogEndOffset(), h.p.HighWatermark())
	}
	b.stopped()
}

// stopped ends the incarnation.
func (b *broker) stopped() {
	b.up = false
	for _, leader := range b.s.cfg.Brokers {
		if l := b.loops[leader]; l != nil {
			l.stopped = true
			delete(b.loops, leader)
		}
	}
	b.incarnation++
}

// Close closes every running replica's log at the end of the run.
func (s *Sim) Close() {
	for _, id := range s.cfg.Brokers {
		if b := s.brokers[id]; b.up {
			for _, h := range b.hosts {
				h.p.Close()
			}
		}
	}
}

// alive reports whether the incarnation inc still runs.
func (b *broker) alive(inc int) bool { return b.up && b.incarnation == inc }

// every runs fn every d while this incarnation runs.
func (b *broker) every(d time.Duration, what string, fn func()) {
	inc := b.incarnation
	var tick func()
	tick = func() {
		if !b.alive(inc) {
			return
		}
		fn()
		b.s.after(d, what, tick)
	}
	b.s.after(b.s.jitter(0, d), what, tick)
}

// later runs fn after d if this incarnation still runs then.
func (b *broker) later(d time.Duration, what string, fn func()) {
	inc := b.incarnation
	b.s.after(d, what, func() {
		if b.alive(inc) {
			fn()
		}
	})
}

// applyMetadata makes each replica leader or follower as the metadata
// says, as the server's applyImage does (Kafka's
// ReplicaManager.applyDelta).
//
// As Kafka's broker publishes metadata to its ReplicaManager only once it
// has caught up past its own registration, a restarted broker applies
// nothing until the metadata holds this incarnation's registration: by
// then the controller has moved the leaderships of the incarnation
// before, whose log may have lost an unflushed tail that followers hold
// under the same leader epoch.
func (b *broker) applyMetadata(md Metadata) {
	if !b.up || md.Version <= b.md.Version || b.epoch < 0 || md.BrokerEpochs[b.id] != b.epoch {
		return
	}
	b.md = md
	for _, h := range b.hosts {
		b.applyRegistration(h, md.Partitions[h.idx])
	}
}

func (b *broker) applyRegistration(h *host, reg Registration) {
	st := h.p.State()
	if reg.Leader == b.id {
		if st.Role != partition.RoleLeader || st.LeaderEpoch != reg.LeaderEpoch || st.PartitionEpoch < reg.PartitionEpoch {
			if _, err := h.p.MakeLeader(reg.LeaderEpoch, reg.PartitionEpoch, reg.Replicas, reg.ISR, b.s.now()); err != nil {
				b.s.record("broker %d p%d make leader: %v", b.id, h.idx, err)
				return
			}
			b.s.record("broker %d leads p%d epoch %d (partition epoch %d, isr %v): log end %d, high watermark %d",
				b.id, h.idx, reg.LeaderEpoch, reg.PartitionEpoch, reg.ISR, h.p.LogEndOffset(), h.p.HighWatermark())
			if st.Role != partition.RoleLeader || st.LeaderEpoch != reg.LeaderEpoch {
				b.s.inv.becameLeader(b, h)
			}
			if h.p.FlushDeferred() && h.p.NeedsFlush() {
				b.requestFlush(h)
			}
		}
		b.stopFetching(h)
		b.completeWaiting(h)
		return
	}
	if st.Role != partition.RoleFollower || st.LeaderEpoch != reg.LeaderEpoch || st.PartitionEpoch < reg.PartitionEpoch || st.LeaderID != reg.Leader {
		if _, err := h.p.MakeFollower(reg.Leader, reg.LeaderEpoch, reg.PartitionEpoch, reg.Replicas, reg.ISR); err != nil {
			b.s.record("broker %d p%d make follower: %v", b.id, h.idx, err)
			return
		}
		b.s.record("broker %d follows %d for p%d in epoch %d", b.id, reg.Leader, h.idx, reg.LeaderEpoch)
	}
	b.completeWaiting(h)
	switch {
	case reg.Leader < 0:
		b.stopFetching(h)
	case h.fetchingFrom != reg.Leader || h.fetchingEpoch != reg.LeaderEpoch:
		b.fetchFrom(h, reg.Leader, reg.LeaderEpoch)
	}
}

// completeWaiting answers the produces and fetches that wait on the
// replica and can be answered now.
func (b *broker) completeWaiting(h *host) {
	b.produces.CheckAndComplete(h.p)
	b.fetches.CheckAndComplete(h.p)
}

// requestFlush is the leader's group commit: one flush shortly after
// appends, covering all of them.
func (b *broker) requestFlush(h *host) {
	if h.flushPending {
		return
	}
	h.flushPending = true
	b.later(b.s.jitter(200*time.Microsecond, 4*time.Millisecond), "leader flush", func() {
		h.flushPending = false
		moved, err := h.p.Flush(b.s.now())
		if err != nil {
			b.s.fail("broker %d p%d flush: %v", b.id, h.idx, err)
			return
		}
		if moved {
			b.completeWaiting(h)
		}
		if h.p.NeedsFlush() && h.p.FlushDeferred() {
			b.requestFlush(h)
		}
	})
}

// truncated notes a follower truncation.
func (b *broker) truncated(h *host, before int64, err error) {
	if after := h.p.LogEndOffset(); after < before {
		b.s.inv.truncations++
		b.s.record("broker %d truncates p%d from %d to %d (high watermark %d)", b.id, h.idx, before, after, h.p.HighWatermark())
	}
	if err != nil {
		b.s.record("broker %d p%d truncation failed: %v", b.id, h.idx, err)
	}
}
