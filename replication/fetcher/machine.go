package fetcher

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Machine is the protocol of one replica fetcher thread as a state machine
// (the logic of Kafka's AbstractFetcherThread, without its loop): it
// builds Fetch requests, applies their answers to the local replicas, and
// resets partitions the leader answered out of range. It sends nothing,
// starts no goroutine and reads no clock: the caller passes the time in,
// carries its requests and answers, and flushes the replicas it names. A
// Thread drives one on a goroutine over the network; a simulation can
// drive one from its event queue.
//
// Its methods may be called from several goroutines: they take the
// machine's lock, which is never held while a request is out.
type Machine struct {
	name      string
	fetcherID int
	leader    int32
	cfg       Config
	log       *slog.Logger
	failed    *failedPartitions

	mu    sync.Mutex
	parts map[TopicPartition]*partitionState
	// order is the order partitions go into a request. A partition that got
	// data moves to the end, so that when the response size limit cuts an
	// answer short the same partitions are not always the ones left out.
	order        []TopicPartition
	requests     int64
	errors       int64
	bytes        int64
	lastResponse time.Time
}

// NewMachine returns the state machine of fetcher thread fetcherID
// fetching from broker leader, with no partition. cfg's Send and Clock are
// not used: the caller does the sending and passes the time.
func NewMachine(cfg Config, fetcherID int, leader int32) *Machine {
	return newMachine(cfg.withDefaults(), fetcherID, leader, &failedPartitions{set: map[TopicPartition]struct{}{}})
}

func newMachine(cfg Config, fetcherID int, leader int32, failed *failedPartitions) *Machine {
	name := ThreadName(fetcherID, leader)
	return &Machine{
		name: name, fetcherID: fetcherID, leader: leader, cfg: cfg, log: cfg.Logger.With("fetcher", name),
		failed: failed, parts: map[TopicPartition]*partitionState{},
	}
}

// Name is the thread's name, ReplicaFetcherThread-<fetcherId>-<sourceBrokerId>.
func (m *Machine) Name() string { return m.name }

// SourceBroker is the leader the machine fetches from.
func (m *Machine) SourceBroker() int32 { return m.leader }

// AddPartitions starts fetching the partitions, keeping the state of any
// already here in the same leader epoch (Kafka's partitionFetchState). They
// join the request order sorted, so that the order does not depend on the
// map's.
func (m *Machine) AddPartitions(states map[TopicPartition]InitialFetchState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tps := make([]TopicPartition, 0, len(states))
	for tp := range states {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTopicPartitions)
	for _, tp := range tps {
		init := states[tp]
		// Under the machine's lock, so that a failure of the partition's
		// old state cannot be recorded after it is added again.
		m.failed.remove(tp)
		if cur, ok := m.parts[tp]; ok && cur.CurrentLeaderEpoch == init.LeaderEpoch && cur.replica == init.Replica {
			continue
		}
		offset := init.InitOffset
		if offset < 0 {
			offset = init.Replica.LogEndOffset()
		}
		lastEpoch := init.Replica.LastFetchedEpoch()
		state := Fetching
		if lastEpoch < 0 {
			// No epoch to send for the leader to find a divergence with:
			// truncate to the initial offset first, as Kafka does for a log
			// without a leader-epoch cache.
			state = Truncating
		}
		m.parts[tp] = &partitionState{
			PartitionFetchState: PartitionFetchState{
				TopicID: init.TopicID, FetchOffset: offset, LastFetchedEpoch: lastEpoch,
				CurrentLeaderEpoch: init.LeaderEpoch, State: state,
			},
			replica:     init.Replica,
			bytesPerSec: newMeter(DefaultReplicationQuotaWindowNum, DefaultReplicationQuotaWindowSize),
			highWater:   -1,
		}
		m.moveToEnd(tp)
		m.log.Info("added partition", "partition", tp, "offset", offset, "leaderEpoch", init.LeaderEpoch, "state", state)
	}
}

// RemovePartitions stops fetching the partitions and returns the states
// they had.
func (m *Machine) RemovePartitions(tps []TopicPartition) map[TopicPartition]PartitionFetchState {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[TopicPartition]PartitionFetchState{}
	for _, tp := range tps {
		if st, ok := m.parts[tp]; ok {
			out[tp] = st.PartitionFetchState
			m.removeLocked(tp)
		}
	}
	return out
}

func (m *Machine) removeLocked(tp TopicPartition) {
	delete(m.parts, tp)
	m.order = slices.DeleteFunc(m.order, func(o TopicPartition) bool { return o == tp })
}

func (m *Machine) moveToEnd(tp TopicPartition) {
	m.order = slices.DeleteFunc(m.order, func(o TopicPartition) bool { return o == tp })
	m.order = append(m.order, tp)
}

// PartitionCount is how many partitions the machine fetches.
func (m *Machine) PartitionCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.parts)
}

// Failed lists, sorted, the partitions given up on (a fenced epoch, a
// storage error) until they are added again: this machine's when it
// stands alone, every thread's of a Manager.
func (m *Machine) Failed() []TopicPartition { return m.failed.list() }

// markFailedLocked gives up on a partition until it is added again
// (Kafka's markPartitionFailed): it leaves the machine and is listed as
// failed.
func (m *Machine) markFailedLocked(tp TopicPartition, err error) {
	m.log.Warn("partition marked as failed", "partition", tp, "err", err)
	m.removeLocked(tp)
	m.failed.add(tp)
}

// delayLocked holds a partition back for the fetch backoff, unless it is
// already delayed (Kafka's delayPartitions).
func (m *Machine) delayLocked(tp TopicPartition, now time.Time, reason string) {
	st, ok := m.parts[tp]
	if !ok {
		return
	}
	st.lastError = reason
	if !st.IsDelayed(now) {
		st.DelayedUntil = now.Add(m.cfg.FetchBackoff)
	}
}

// IdleWait is how long to wait, when BuildFetch found nothing to fetch at
// now, before trying again: until the first delayed partition is ready, at
// most the fetch backoff. Adding partitions ends the wait early.
func (m *Machine) IdleWait(now time.Time) time.Duration {
	wait := m.cfg.FetchBackoff
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range m.parts {
		if st.IsDelayed(now) {
			wait = min(wait, st.DelayedUntil.Sub(now))
		}
	}
	return wait
}

// MaybeTruncate truncates the partitions in Truncating to their fetch
// offset and moves them to Fetching; call it before each BuildFetch.
func (m *Machine) MaybeTruncate() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, tp := range slices.Clone(m.order) {
		st := m.parts[tp]
		if st.State != Truncating {
			continue
		}
		if err := st.replica.TruncateTo(st.FetchOffset); err != nil {
			m.markFailedLocked(tp, fmt.Errorf("truncate %s to %d: %w", tp, st.FetchOffset, err))
			continue
		}
		st.State = Fetching
		st.LastFetchedEpoch = st.replica.LastFetchedEpoch()
		m.log.Info("truncated to the initial offset", "partition", tp, "offset", st.FetchOffset)
	}
}

// Stats is a snapshot of the machine and its partitions at now.
func (m *Machine) Stats(now time.Time) ThreadStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := ThreadStats{
		Name: m.name, FetcherID: m.fetcherID, SourceBroker: m.leader,
		Requests: m.requests, Errors: m.errors, Bytes: m.bytes, LastResponseTime: m.lastResponse,
	}
	for _, tp := range m.order {
		st := m.parts[tp]
		s.Partitions = append(s.Partitions, PartitionStats{
			TopicPartition: tp, PartitionFetchState: st.PartitionFetchState, Delayed: st.IsDelayed(now),
			LogEndOffset: st.replica.LogEndOffset(), HighWatermark: st.highWater,
			LastFetchTime: st.lastFetch, BytesPerSec: st.bytesPerSec.rate(now),
			Records: st.records, Bytes: st.bytes, Truncations: st.truncations, LastError: st.lastError,
			Throttled: m.cfg.Quota != nil && m.cfg.Quota.IsThrottled(tp),
		})
	}
	slices.SortFunc(s.Partitions, func(a, b PartitionStats) int {
		return compareTopicPartitions(a.TopicPartition, b.TopicPartition)
	})
	return s
}

func compareTopicPartitions(a, b TopicPartition) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}
