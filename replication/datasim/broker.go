package datasim

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/storage"
)

// broker is one broker of the simulation: its replicas of the topic's
// partitions (the real partition.Partition on a real log directory), the
// real fetcher state machines when it follows, the leader side of Fetch,
// ListOffsets and Produce, and its session with the controller. A crash
// cuts each log to its flushed offset and ends the incarnation: timers and
// answers meant for it are dropped.
type broker struct {
	s           *Sim
	id          int32
	dir         string
	incarnation int
	up          bool
	epoch       int64    // registered broker epoch, -1 before
	md          metadata // the metadata applied
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
	hwmCheckpoint               int64
	flushPending                bool
	isrInflight                 int // token of the AlterPartition out, 0 if none
	fetchingFrom, fetchingEpoch int32
}

func newBroker(s *Sim, id int32, dir string) *broker {
	b := &broker{s: s, id: id, dir: dir, loops: map[int32]*followLoop{}}
	for i := range s.partitions {
		b.hosts = append(b.hosts, &host{idx: i, fetchingFrom: -1, fetchingEpoch: -1})
	}
	return b
}

// start opens the replicas (recovering what a crash left) and registers.
func (b *broker) start() error {
	b.incarnation++
	b.epoch, b.md = -1, metadata{}
	b.produces, b.fetches = partition.NewPurgatory[*partition.Partition](), partition.NewPurgatory[*partition.Partition]()
	for _, h := range b.hosts {
		h.flushPending, h.isrInflight, h.fetchingFrom, h.fetchingEpoch = false, 0, -1, -1
		p, err := partition.New(partition.Config{
			Topic: topic, TopicID: topicID, Partition: h.idx, Dir: b.dir, LocalBrokerID: b.id,
			Log:               storage.Options{FlushPolicy: b.s.flushPolicy, SegmentBytes: 16 << 10, Disk: noSyncDisk{}},
			MinInsyncReplicas: b.s.minISR, ReplicaLagTimeMax: replicaLagTimeMax, HighWatermark: h.hwmCheckpoint,
			ReplicaEligible: func(id int32) bool { return b.md.version > 0 && !b.md.fenced[id] },
			AliveBrokerEpoch: func(id int32) (int64, bool) {
				e, ok := b.md.brokerEpoch[id]
				return e, ok && !b.md.fenced[id]
			},
			Now: func() time.Time { return b.s.now },
		})
		if err != nil {
			return fmt.Errorf("broker %d: %w", b.id, err)
		}
		h.p = p
		b.s.record("broker %d starts p%d (incarnation %d): log end %d, high watermark %d", b.id, h.idx, b.incarnation, p.LogEndOffset(), p.HighWatermark())
	}
	b.up = true
	b.register()
	b.every(heartbeatInterval, "heartbeat", b.heartbeat)
	b.every(250*time.Millisecond, "metadata poll", b.pollMetadata)
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
	if !b.up {
		return
	}
	for _, h := range b.hosts {
		if err := h.p.Crash(); err != nil {
			b.s.fail("broker %d crash: %v", b.id, err)
		}
		b.s.record("broker %d crashes: p%d log end %d, high watermark %d", b.id, h.idx, h.p.LogEndOffset(), h.p.HighWatermark())
	}
	b.up = false
	for _, leader := range brokerIDs {
		if l := b.loops[leader]; l != nil {
			l.stopped = true
			delete(b.loops, leader)
		}
	}
	b.incarnation++
	b.s.inv.crashes++
}

// closeAll closes every replica's log at the end of the run.
func (b *broker) closeAll() {
	if b.up {
		for _, h := range b.hosts {
			h.p.Close()
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

func (b *broker) register() {
	inc := b.incarnation
	b.s.net.send(b.id, controllerID, "register", func() {
		epoch := b.s.ctrl.register(b.id, inc)
		b.s.net.send(controllerID, b.id, "registered", func() {
			if b.alive(inc) && b.epoch < 0 {
				b.epoch = epoch
				b.s.record("broker %d registered with epoch %d", b.id, epoch)
			}
		})
	})
	b.later(time.Second, "register retry", func() {
		if b.epoch < 0 {
			b.register()
		}
	})
}

func (b *broker) heartbeat() {
	if b.epoch < 0 {
		return
	}
	epoch := b.epoch
	b.s.net.send(b.id, controllerID, "heartbeat", func() { b.s.ctrl.heartbeat(b.id, epoch) })
}

func (b *broker) pollMetadata() {
	b.s.net.send(b.id, controllerID, "metadata poll", func() {
		md := b.s.ctrl.snapshot()
		b.s.net.send(controllerID, b.id, "metadata", func() { b.applyMetadata(md) })
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
func (b *broker) applyMetadata(md metadata) {
	if !b.up || md.version <= b.md.version || b.epoch < 0 || md.brokerEpoch[b.id] != b.epoch {
		return
	}
	b.md = md
	for _, h := range b.hosts {
		b.applyRegistration(h, md.parts[h.idx])
	}
}

func (b *broker) applyRegistration(h *host, reg registration) {
	st := h.p.State()
	if reg.leader == b.id {
		if st.Role != partition.RoleLeader || st.LeaderEpoch != reg.leaderEpoch || st.PartitionEpoch < reg.partEpoch {
			if _, err := h.p.MakeLeader(reg.leaderEpoch, reg.partEpoch, reg.replicas, reg.isr, b.s.now); err != nil {
				b.s.record("broker %d p%d make leader: %v", b.id, h.idx, err)
				return
			}
			b.s.record("broker %d leads p%d epoch %d (partition epoch %d, isr %v): log end %d, high watermark %d",
				b.id, h.idx, reg.leaderEpoch, reg.partEpoch, reg.isr, h.p.LogEndOffset(), h.p.HighWatermark())
			if st.Role != partition.RoleLeader || st.LeaderEpoch != reg.leaderEpoch {
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
	if st.Role != partition.RoleFollower || st.LeaderEpoch != reg.leaderEpoch || st.PartitionEpoch < reg.partEpoch || st.LeaderID != reg.leader {
		if _, err := h.p.MakeFollower(reg.leader, reg.leaderEpoch, reg.partEpoch, reg.replicas, reg.isr); err != nil {
			b.s.record("broker %d p%d make follower: %v", b.id, h.idx, err)
			return
		}
		b.s.record("broker %d follows %d for p%d in epoch %d", b.id, reg.leader, h.idx, reg.leaderEpoch)
	}
	b.completeWaiting(h)
	switch {
	case reg.leader < 0:
		b.stopFetching(h)
	case h.fetchingFrom != reg.leader || h.fetchingEpoch != reg.leaderEpoch:
		b.fetchFrom(h, reg.leader, reg.leaderEpoch)
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
		moved, err := h.p.Flush(b.s.now)
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
