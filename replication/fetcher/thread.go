package fetcher

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Thread is one replica fetcher thread (Kafka's ReplicaFetcherThread): a
// goroutine fetching a set of partitions from one source broker with one
// Fetch request at a time.
type Thread struct {
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

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// ThreadName is Kafka's name for the thread fetcherID fetching from broker
// sourceBroker.
func ThreadName(fetcherID int, sourceBroker int32) string {
	return fmt.Sprintf("ReplicaFetcherThread-%d-%d", fetcherID, sourceBroker)
}

func startThread(cfg Config, fetcherID int, leader int32, failed *failedPartitions) *Thread {
	ctx, cancel := context.WithCancel(context.Background())
	t := &Thread{
		name: ThreadName(fetcherID, leader), fetcherID: fetcherID, leader: leader, cfg: cfg,
		failed: failed, parts: map[TopicPartition]*partitionState{},
		wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	t.log = cfg.Logger.With("fetcher", t.name)
	go t.run()
	return t
}

// Name is the thread's name, ReplicaFetcherThread-<fetcherId>-<sourceBrokerId>.
func (t *Thread) Name() string { return t.name }

// SourceBroker is the leader the thread fetches from.
func (t *Thread) SourceBroker() int32 { return t.leader }

// initiateShutdown stops the loop without waiting: an in-flight fetch is
// cancelled through its context.
func (t *Thread) initiateShutdown() { t.cancel() }

// shutdown stops the loop and waits for the goroutine to end.
func (t *Thread) shutdown() {
	t.cancel()
	<-t.done
}

func (t *Thread) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// addPartitions starts fetching the partitions, keeping the state of any
// already here in the same leader epoch (Kafka's partitionFetchState).
func (t *Thread) addPartitions(states map[TopicPartition]InitialFetchState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for tp, init := range states {
		// Under the thread's lock, so that a failure of the partition's old
		// state cannot be recorded after it is added again.
		t.failed.remove(tp)
		if cur, ok := t.parts[tp]; ok && cur.CurrentLeaderEpoch == init.LeaderEpoch && cur.replica == init.Replica {
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
		t.parts[tp] = &partitionState{
			PartitionFetchState: PartitionFetchState{
				TopicID: init.TopicID, FetchOffset: offset, LastFetchedEpoch: lastEpoch,
				CurrentLeaderEpoch: init.LeaderEpoch, State: state,
			},
			replica:     init.Replica,
			bytesPerSec: newMeter(DefaultReplicationQuotaWindowNum, DefaultReplicationQuotaWindowSize),
			highWater:   -1,
		}
		t.moveToEnd(tp)
		t.log.Info("added partition", "partition", tp, "offset", offset, "leaderEpoch", init.LeaderEpoch, "state", state)
	}
	t.signal()
}

// removePartitions stops fetching the partitions and returns the states
// they had.
func (t *Thread) removePartitions(tps []TopicPartition) map[TopicPartition]PartitionFetchState {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[TopicPartition]PartitionFetchState{}
	for _, tp := range tps {
		if st, ok := t.parts[tp]; ok {
			out[tp] = st.PartitionFetchState
			t.removeLocked(tp)
		}
	}
	return out
}

func (t *Thread) removeLocked(tp TopicPartition) {
	delete(t.parts, tp)
	t.order = slices.DeleteFunc(t.order, func(o TopicPartition) bool { return o == tp })
}

func (t *Thread) moveToEnd(tp TopicPartition) {
	t.order = slices.DeleteFunc(t.order, func(o TopicPartition) bool { return o == tp })
	t.order = append(t.order, tp)
}

func (t *Thread) partitionCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.parts)
}

// markFailedLocked gives up on a partition until it is added again
// (Kafka's markPartitionFailed): it leaves the thread and the manager lists
// it as failed.
func (t *Thread) markFailedLocked(tp TopicPartition, err error) {
	t.log.Warn("partition marked as failed", "partition", tp, "err", err)
	t.removeLocked(tp)
	t.failed.add(tp)
}

// delayLocked holds a partition back for the fetch backoff, unless it is
// already delayed (Kafka's delayPartitions).
func (t *Thread) delayLocked(tp TopicPartition, now time.Time, reason string) {
	st, ok := t.parts[tp]
	if !ok {
		return
	}
	st.lastError = reason
	if !st.IsDelayed(now) {
		st.DelayedUntil = now.Add(t.cfg.FetchBackoff)
	}
}

func (t *Thread) run() {
	defer close(t.done)
	for t.ctx.Err() == nil {
		t.maybeTruncate()
		f := t.buildFetch(t.cfg.Clock.Now())
		if f == nil {
			t.waitForWork()
			continue
		}
		t.processFetchRequest(f)
	}
}

// waitForWork waits, when no partition can be fetched, for a partition to
// be added, for the first delay to end, or for the fetch backoff.
func (t *Thread) waitForWork() {
	wait := t.cfg.FetchBackoff
	now := t.cfg.Clock.Now()
	t.mu.Lock()
	for _, st := range t.parts {
		if st.IsDelayed(now) {
			wait = min(wait, st.DelayedUntil.Sub(now))
		}
	}
	t.mu.Unlock()
	timer := t.cfg.Clock.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
	case <-t.wake:
	case <-timer.C:
	}
}

// maybeTruncate truncates the partitions in Truncating to their fetch
// offset and moves them to Fetching.
func (t *Thread) maybeTruncate() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range slices.Clone(t.order) {
		st := t.parts[tp]
		if st.State != Truncating {
			continue
		}
		if err := st.replica.TruncateTo(st.FetchOffset); err != nil {
			t.markFailedLocked(tp, fmt.Errorf("truncate %s to %d: %w", tp, st.FetchOffset, err))
			continue
		}
		st.State = Fetching
		st.LastFetchedEpoch = st.replica.LastFetchedEpoch()
		t.log.Info("truncated to the initial offset", "partition", tp, "offset", st.FetchOffset)
	}
}

// Stats is a snapshot of the thread and its partitions.
func (t *Thread) Stats() ThreadStats {
	now := t.cfg.Clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := ThreadStats{
		Name: t.name, FetcherID: t.fetcherID, SourceBroker: t.leader,
		Requests: t.requests, Errors: t.errors, Bytes: t.bytes, LastResponseTime: t.lastResponse,
	}
	for _, tp := range t.order {
		st := t.parts[tp]
		s.Partitions = append(s.Partitions, PartitionStats{
			TopicPartition: tp, PartitionFetchState: st.PartitionFetchState, Delayed: st.IsDelayed(now),
			LogEndOffset: st.replica.LogEndOffset(), HighWatermark: st.highWater,
			LastFetchTime: st.lastFetch, BytesPerSec: st.bytesPerSec.rate(now),
			Records: st.records, Bytes: st.bytes, Truncations: st.truncations, LastError: st.lastError,
			Throttled: t.cfg.Quota != nil && t.cfg.Quota.IsThrottled(tp),
		})
	}
	slices.SortFunc(s.Partitions, func(a, b PartitionStats) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return s
}
