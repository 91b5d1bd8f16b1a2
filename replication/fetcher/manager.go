package fetcher

import (
	"cmp"
	"errors"
	"slices"
	"sync"
)

// threadKey names a thread: a source broker and a fetcher id on it
// (Kafka's BrokerIdAndFetcherId).
type threadKey struct {
	broker    int32
	fetcherID int
}

// Manager is a broker's ReplicaFetcherManager: it hashes each follower
// partition onto one of num.replica.fetchers threads for its leader,
// starts threads as partitions arrive and stops those left with none.
type Manager struct {
	cfg Config

	mu      sync.Mutex
	threads map[threadKey]*Thread
	closed  bool

	failed *failedPartitions
}

// failedPartitions are the partitions threads gave up on (Kafka's
// FailedPartitions). Its lock is taken inside a machine's, never the other
// way round.
type failedPartitions struct {
	mu  sync.Mutex
	set map[TopicPartition]struct{}
}

func (f *failedPartitions) add(tp TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set[tp] = struct{}{}
}

func (f *failedPartitions) remove(tp TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.set, tp)
}

func (f *failedPartitions) list() []TopicPartition {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]TopicPartition, 0, len(f.set))
	for tp := range f.set {
		out = append(out, tp)
	}
	slices.SortFunc(out, compareTopicPartitions)
	return out
}

// NewManager returns a manager with no threads.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.Send == nil {
		return nil, errors.New("fetcher config: no Send")
	}
	cfg = cfg.withDefaults()
	return &Manager{cfg: cfg, threads: map[threadKey]*Thread{}, failed: &failedPartitions{set: map[TopicPartition]struct{}{}}}, nil
}

// FetcherID is the thread number tp goes to on any source broker.
func (m *Manager) FetcherID(tp TopicPartition) int { return FetcherID(tp, m.cfg.NumReplicaFetchers) }

// AddPartitions makes the partitions fetch from their leaders
// (addFetcherForPartitions). A partition already fetching from another
// leader moves to the new leader's thread; one already on the right thread
// in the same leader epoch keeps its position. Threads left with no
// partition are shut down.
func (m *Manager) AddPartitions(states map[TopicPartition]InitialFetchState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	perThread := map[threadKey]map[TopicPartition]InitialFetchState{}
	for tp, st := range states {
		key := threadKey{st.Leader, m.FetcherID(tp)}
		if perThread[key] == nil {
			perThread[key] = map[TopicPartition]InitialFetchState{}
		}
		perThread[key][tp] = st
		for k, th := range m.threads {
			if k != key {
				th.m.RemovePartitions([]TopicPartition{tp})
			}
		}
	}
	for key, group := range perThread {
		th, ok := m.threads[key]
		if !ok {
			th = startThread(m.cfg, key.fetcherID, key.broker, m.failed)
			m.threads[key] = th
		}
		th.m.AddPartitions(group)
		th.signal()
	}
	m.shutdownIdleFetcherThreadsLocked()
}

// RemovePartitions stops fetching the partitions (removeFetcherForPartitions)
// and returns the fetch states they had; threads left with no partition are
// shut down.
func (m *Manager) RemovePartitions(tps ...TopicPartition) map[TopicPartition]PartitionFetchState {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[TopicPartition]PartitionFetchState{}
	for _, th := range m.threads {
		for tp, st := range th.m.RemovePartitions(tps) {
			out[tp] = st
		}
	}
	for _, tp := range tps {
		m.failed.remove(tp)
	}
	m.shutdownIdleFetcherThreadsLocked()
	return out
}

func (m *Manager) shutdownIdleFetcherThreadsLocked() {
	for key, th := range m.threads {
		if th.m.PartitionCount() == 0 {
			th.shutdown()
			delete(m.threads, key)
		}
	}
}

// Close stops every thread and waits for them (closeAllFetchers); the
// manager takes no partitions afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, th := range m.threads {
		th.initiateShutdown()
	}
	for key, th := range m.threads {
		th.shutdown()
		delete(m.threads, key)
	}
}

// Stats is a snapshot of every thread, ordered by source broker and
// fetcher id, and of the failed partitions.
func (m *Manager) Stats() ManagerStats {
	m.mu.Lock()
	threads := make([]*Thread, 0, len(m.threads))
	for _, th := range m.threads {
		threads = append(threads, th)
	}
	m.mu.Unlock()
	var s ManagerStats
	for _, th := range threads {
		s.Threads = append(s.Threads, th.Stats())
	}
	slices.SortFunc(s.Threads, func(a, b ThreadStats) int {
		return cmp.Or(cmp.Compare(a.SourceBroker, b.SourceBroker), cmp.Compare(a.FetcherID, b.FetcherID))
	})
	if failed := m.failed.list(); len(failed) > 0 {
		s.FailedPartitions = failed
	}
	return s
}
