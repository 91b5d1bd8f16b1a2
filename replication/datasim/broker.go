package datasim

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/storage"
)

// broker is one broker of the simulation: its replica of the partition
// (the real partition.Partition on a real log directory), the real fetcher
// state machine when it follows, the leader side of Fetch, ListOffsets and
// Produce, and its session with the controller. A crash cuts the log to
// its flushed offset and ends the incarnation: timers and answers meant
// for it are dropped.
type broker struct {
	s           *Sim
	id          int32
	dir         string
	incarnation int
	p           *partition.Partition // nil while down
	epoch       int64                // registered broker epoch, -1 before
	md          metadata             // the metadata applied
	// hwmCheckpoint is the high watermark last checkpointed (Kafka's
	// replication-offset-checkpoint), which a restart starts from.
	hwmCheckpoint int64

	produces, fetches *partition.Purgatory[*partition.Partition]
	flushPending      bool
	isrInflight       int // token of the AlterPartition out, 0 if none
	isrTokens         int

	follow                      *followLoop
	fetchingFrom, fetchingEpoch int32
}

func newBroker(s *Sim, id int32, dir string) *broker {
	return &broker{s: s, id: id, dir: dir, fetchingFrom: -1, fetchingEpoch: -1}
}

// start opens the replica (recovering what a crash left) and registers.
func (b *broker) start() error {
	b.incarnation++
	b.epoch, b.md, b.fetchingFrom, b.fetchingEpoch = -1, metadata{}, -1, -1
	b.flushPending, b.isrInflight = false, 0
	b.produces, b.fetches = partition.NewPurgatory[*partition.Partition](), partition.NewPurgatory[*partition.Partition]()
	p, err := partition.New(partition.Config{
		Topic: topic, TopicID: topicID, Partition: partitionIdx, Dir: b.dir, LocalBrokerID: b.id,
		Log:               storage.Options{FlushPolicy: b.s.flushPolicy, SegmentBytes: 16 << 10, Disk: noSyncDisk{}},
		MinInsyncReplicas: b.s.minISR, ReplicaLagTimeMax: replicaLagTimeMax, HighWatermark: b.hwmCheckpoint,
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
	b.p = p
	b.s.record("broker %d starts (incarnation %d): log end %d, high watermark %d", b.id, b.incarnation, p.LogEndOffset(), p.HighWatermark())
	b.register()
	b.every(heartbeatInterval, "heartbeat", b.heartbeat)
	b.every(250*time.Millisecond, "metadata poll", b.pollMetadata)
	b.every(isrCheckInterval, "isr check", b.maybeChangeISR)
	b.every(time.Second, "hwm checkpoint", func() { b.hwmCheckpoint = b.p.HighWatermark() })
	return nil
}

// crash kills the broker: the log keeps what was flushed.
func (b *broker) crash() {
	if b.p == nil {
		return
	}
	if err := b.p.Crash(); err != nil {
		b.s.fail("broker %d crash: %v", b.id, err)
	}
	b.s.record("broker %d crashes: log end %d, high watermark %d", b.id, b.p.LogEndOffset(), b.p.HighWatermark())
	b.p = nil
	b.stopFetching()
	b.incarnation++
	b.s.inv.crashes++
}

// alive reports whether the incarnation inc still runs.
func (b *broker) alive(inc int) bool { return b.p != nil && b.incarnation == inc }

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

// applyMetadata makes the replica leader or follower as the metadata says,
// as the server's applyImage does (Kafka's ReplicaManager.applyDelta).
func (b *broker) applyMetadata(md metadata) {
	if b.p == nil || md.version <= b.md.version {
		return
	}
	b.md = md
	st := b.p.State()
	if md.leader == b.id {
		if st.Role != partition.RoleLeader || st.LeaderEpoch != md.leaderEpoch || st.PartitionEpoch < md.partEpoch {
			if _, err := b.p.MakeLeader(md.leaderEpoch, md.partEpoch, md.replicas, md.isr, b.s.now); err != nil {
				b.s.record("broker %d make leader: %v", b.id, err)
				return
			}
			b.s.record("broker %d leads epoch %d (partition epoch %d, isr %v): log end %d, high watermark %d",
				b.id, md.leaderEpoch, md.partEpoch, md.isr, b.p.LogEndOffset(), b.p.HighWatermark())
			if st.Role != partition.RoleLeader || st.LeaderEpoch != md.leaderEpoch {
				b.s.inv.becameLeader(b)
			}
			if b.p.FlushDeferred() && b.p.NeedsFlush() {
				b.requestFlush()
			}
		}
		b.stopFetching()
		b.completeWaiting()
		return
	}
	if st.Role != partition.RoleFollower || st.LeaderEpoch != md.leaderEpoch || st.PartitionEpoch < md.partEpoch || st.LeaderID != md.leader {
		if _, err := b.p.MakeFollower(md.leader, md.leaderEpoch, md.partEpoch, md.replicas, md.isr); err != nil {
			b.s.record("broker %d make follower: %v", b.id, err)
			return
		}
		b.s.record("broker %d follows %d in epoch %d", b.id, md.leader, md.leaderEpoch)
	}
	b.completeWaiting()
	switch {
	case md.leader < 0:
		b.stopFetching()
	case b.fetchingFrom != md.leader || b.fetchingEpoch != md.leaderEpoch:
		b.fetchFrom(md.leader, md.leaderEpoch)
	}
}

// completeWaiting answers the produces and fetches that wait on the
// replica and can be answered now.
func (b *broker) completeWaiting() {
	b.produces.CheckAndComplete(b.p)
	b.fetches.CheckAndComplete(b.p)
}

// requestFlush is the leader's group commit: one flush shortly after
// appends, covering all of them.
func (b *broker) requestFlush() {
	if b.flushPending {
		return
	}
	b.flushPending = true
	b.later(b.s.jitter(200*time.Microsecond, 4*time.Millisecond), "leader flush", func() {
		b.flushPending = false
		moved, err := b.p.Flush(b.s.now)
		if err != nil {
			b.s.fail("broker %d flush: %v", b.id, err)
			return
		}
		if moved {
			b.completeWaiting()
		}
		if b.p.NeedsFlush() && b.p.FlushDeferred() {
			b.requestFlush()
		}
	})
}

// truncated notes a follower truncation.
func (b *broker) truncated(before int64, err error) {
	if after := b.p.LogEndOffset(); after < before {
		b.s.inv.truncations++
		b.s.record("broker %d truncates from %d to %d (high watermark %d)", b.id, before, after, b.p.HighWatermark())
	}
	if err != nil {
		b.s.record("broker %d truncation failed: %v", b.id, err)
	}
}
