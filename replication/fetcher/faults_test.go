package fetcher

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

func threadNames(m *Manager) []string {
	var names []string
	for _, th := range m.Stats().Threads {
		names = append(names, th.Name)
	}
	return names
}

func partitionStats(m *Manager, tp TopicPartition) (PartitionStats, bool) {
	for _, th := range m.Stats().Threads {
		for _, p := range th.Partitions {
			if p.TopicPartition == tp {
				return p, true
			}
		}
	}
	return PartitionStats{}, false
}

// A leader change moves the partition to the new leader's thread; the old
// leader's thread, left idle, shuts down.
func TestLeaderChangeMovesPartitionToNewLeadersThread(t *testing.T) {
	tp := TopicPartition{"orders", 0}
	old, next := newTestLeader(1), newTestLeader(2)
	old.lead(tp, 1, openLog(t))
	old.produce(t, tp, 4)
	f := newFollower(t)
	m := newManager(t, network{1: old, 2: next}, Config{})
	addAll(m, 1, 1, map[TopicPartition]*followerLog{tp: f})
	eventually(t, "caught up with leader 1", func() bool { return caughtUp(t, old, tp, f) }, statsOf(m))

	// Broker 2 takes over in epoch 2 with the committed log and writes more.
	newLog := openLog(t)
	if err := newLog.AppendAsFollower(readAll(t, old.parts[tp].log)); err != nil {
		t.Fatal(err)
	}
	next.lead(tp, 2, newLog)
	next.produce(t, tp, 3)
	addAll(m, 2, 2, map[TopicPartition]*followerLog{tp: f})
	if got := threadNames(m); !slices.Equal(got, []string{"ReplicaFetcherThread-0-2"}) {
		t.Fatalf("threads %v, want only ReplicaFetcherThread-0-2", got)
	}
	eventually(t, "caught up with leader 2", func() bool { return caughtUp(t, next, tp, f) }, statsOf(m))
	if !bytes.Equal(f.bytes(t), leaderBytes(t, next, tp)) {
		t.Fatal("follower's log differs from the new leader's")
	}
}

// An error for one partition (NOT_LEADER_OR_FOLLOWER) delays only that
// partition: the others on the thread keep fetching, and it resumes once
// the leader answers it again.
func TestPartitionErrorDelaysOnlyThatPartition(t *testing.T) {
	bad, good := TopicPartition{"orders", 0}, TopicPartition{"orders", 1}
	l := newTestLeader(1)
	followers := map[TopicPartition]*followerLog{}
	for _, tp := range []TopicPartition{bad, good} {
		l.lead(tp, 1, openLog(t))
		l.produce(t, tp, 2)
		followers[tp] = newFollower(t)
	}
	l.setError(bad, kerr.NotLeaderForPartition.Code)
	m := newManager(t, network{1: l}, Config{FetchBackoff: time.Hour})
	addAll(m, 1, 1, followers)
	eventually(t, "good partition caught up", func() bool { return caughtUp(t, l, good, followers[good]) }, statsOf(m))
	l.produce(t, good, 3)
	eventually(t, "good partition caught up again", func() bool { return caughtUp(t, l, good, followers[good]) }, statsOf(m))
	p, _ := partitionStats(m, bad)
	if !p.Delayed || !strings.Contains(p.LastError, "NOT_LEADER") || p.FetchOffset != 0 || followers[bad].LogEndOffset() != 0 {
		t.Fatalf("bad partition %+v, want delayed by NOT_LEADER_FOR_PARTITION at offset 0", p)
	}
	// Metadata brings the same leader again: re-adding in a new epoch
	// resets the delay.
	l.setError(bad, 0)
	l.mu.Lock()
	l.parts[bad].epoch = 2
	l.mu.Unlock()
	addAll(m, 1, 2, map[TopicPartition]*followerLog{bad: followers[bad]})
	eventually(t, "bad partition caught up", func() bool { return caughtUp(t, l, bad, followers[bad]) }, statsOf(m))
}

// One partition the leader is slow to answer holds back every partition on
// its thread, because they share one Fetch, but not partitions on another
// thread.
func TestSlowPartitionDelaysItsThreadOnly(t *testing.T) {
	const n = 2
	var slow, sameThread, otherThread TopicPartition
	var found [3]bool
	for p := range int32(16) {
		tp := TopicPartition{"orders", p}
		switch id := FetcherID(tp, n); {
		case !found[0] && id == 0:
			slow, found[0] = tp, true
		case !found[1] && id == 0:
			sameThread, found[1] = tp, true
		case !found[2] && id == 1:
			otherThread, found[2] = tp, true
		}
	}
	l := newTestLeader(1)
	followers := map[TopicPartition]*followerLog{}
	for _, tp := range []TopicPartition{slow, sameThread, otherThread} {
		l.lead(tp, 1, openLog(t))
		l.produce(t, tp, 2)
		followers[tp] = newFollower(t)
	}
	m := newManager(t, network{1: l}, Config{NumReplicaFetchers: n})
	addAll(m, 1, 1, followers)
	for tp, f := range followers {
		eventually(t, tp.String()+" caught up", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
	}
	release := l.hold(slow)
	defer release()
	// Wait until thread 0's next fetch (holding slow and sameThread) is
	// held at the leader, then produce.
	eventually(t, "the slow partition's fetch held", func() bool { return l.held.Load() > 0 })
	for tp := range followers {
		l.produce(t, tp, 3)
	}
	eventually(t, "the other thread's partition caught up", func() bool {
		return caughtUp(t, l, otherThread, followers[otherThread])
	}, statsOf(m))
	if got := followers[sameThread].LogEndOffset(); got != 2 {
		t.Fatalf("partition on the slow partition's thread at %d, want still 2: it should wait for the slow fetch", got)
	}
	release()
	for tp, f := range followers {
		eventually(t, tp.String()+" caught up after the slow answer", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
	}
}

// A follower behind the leader's log start (OFFSET_OUT_OF_RANGE) asks the
// leader for its offsets, empties its log, starts at the leader's start and
// catches up.
func TestOutOfRangeTruncatesFullyToLeadersStart(t *testing.T) {
	tp := TopicPartition{"orders", 0}
	l := newTestLeader(1)
	log := openLog(t)
	l.lead(tp, 4, log)
	l.produce(t, tp, 10)
	if err := log.AdvanceLogStart(6); err != nil {
		t.Fatal(err)
	}
	f := newFollower(t)
	appendRecords(t, f.log, 4, 2) // offsets 0-1: all below the leader's start
	m := newManager(t, network{1: l}, Config{})
	addAll(m, 1, 4, map[TopicPartition]*followerLog{tp: f})
	eventually(t, "caught up from the leader's start", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
	if got := f.LogStartOffset(); got < 6 {
		t.Fatalf("follower's log start %d, want at the leader's start 6 or above", got)
	}
	if p, _ := partitionStats(m, tp); p.Truncations != 1 {
		t.Fatalf("stats %+v, want one truncation", p)
	}
}

// FENCED_LEADER_EPOCH means our epoch is stale: the partition is marked
// failed and left alone until metadata brings the new epoch.
func TestFencedEpochFailsPartitionUntilReadded(t *testing.T) {
	tp := TopicPartition{"orders", 0}
	l := newTestLeader(1)
	l.lead(tp, 5, openLog(t))
	l.produce(t, tp, 3)
	f := newFollower(t)
	m := newManager(t, network{1: l}, Config{})
	addAll(m, 1, 4, map[TopicPartition]*followerLog{tp: f})
	eventually(t, "partition failed", func() bool {
		return slices.Equal(m.Stats().FailedPartitions, []TopicPartition{tp})
	}, statsOf(m))
	if _, ok := partitionStats(m, tp); ok {
		t.Fatal("a failed partition is still on its thread")
	}
	addAll(m, 1, 5, map[TopicPartition]*followerLog{tp: f})
	if len(m.Stats().FailedPartitions) != 0 {
		t.Fatal("re-added partition still failed")
	}
	eventually(t, "caught up in epoch 5", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
}

// Records a leader wrote in an epoch later than the fetch's are not
// appended (they may be a log the follower has not been told to follow),
// nor is a partial batch at the end of an answer.
func TestBatchesUpToEpoch(t *testing.T) {
	var b []byte
	b = storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 0, LeaderEpoch: 1}, []storage.Record{{Offset: 0, Value: []byte("a")}, {Offset: 1, Value: []byte("b")}})
	first := len(b)
	b = storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 2, LeaderEpoch: 2}, []storage.Record{{Offset: 2, Value: []byte("c")}})
	second := len(b)
	b = storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 3, LeaderEpoch: 3}, []storage.Record{{Offset: 3, Value: []byte("d")}})
	for _, c := range []struct {
		in      []byte
		epoch   int32
		want    int
		records int64
	}{
		{b, 3, len(b), 4},
		{b, 2, second, 3},
		{b, 1, first, 2},
		{b, 0, 0, 0},
		{b[:second+5], 3, second, 3},
		{nil, 3, 0, 0},
	} {
		got, records, err := batchesUpToEpoch(c.in, c.epoch)
		if err != nil || len(got) != c.want || records != c.records {
			t.Errorf("epoch %d over %d bytes: %d bytes, %d records, %v; want %d bytes, %d records", c.epoch, len(c.in), len(got), records, err, c.want, c.records)
		}
	}
	bad := slices.Clone(b)
	bad[16] = 9 // magic
	if _, _, err := batchesUpToEpoch(bad, 3); err == nil {
		t.Error("a batch with a bad magic byte passed")
	}
}

// RemovePartitions shuts the idle thread down, and Close ends a fetch
// parked at the leader at once; goleak (TestMain) checks no goroutine is
// left.
func TestRemoveAndCloseStopThreads(t *testing.T) {
	tp, tp2 := TopicPartition{"orders", 0}, TopicPartition{"payments", 0}
	l := newTestLeader(1)
	l.lead(tp, 1, openLog(t))
	l.lead(tp2, 1, openLog(t))
	f, f2 := newFollower(t), newFollower(t)
	m := newManager(t, network{1: l, 2: l}, Config{FetchWaitMax: time.Hour})
	addAll(m, 1, 1, map[TopicPartition]*followerLog{tp: f})
	addAll(m, 2, 1, map[TopicPartition]*followerLog{tp2: f2})
	eventually(t, "fetches parked", func() bool { return l.fetches.Load() >= 2 })
	states := m.RemovePartitions(tp)
	if st, ok := states[tp]; !ok || st.CurrentLeaderEpoch != 1 || st.State != Fetching {
		t.Fatalf("removed states %+v", states)
	}
	if got := threadNames(m); !slices.Equal(got, []string{"ReplicaFetcherThread-0-2"}) {
		t.Fatalf("threads %v after removal, want only ReplicaFetcherThread-0-2", got)
	}
	m.Close()
	if got := threadNames(m); len(got) != 0 {
		t.Fatalf("threads %v after Close", got)
	}
	m.AddPartitions(map[TopicPartition]InitialFetchState{tp: {Leader: 1, LeaderEpoch: 1, Replica: f}})
	if got := threadNames(m); len(got) != 0 {
		t.Fatalf("a closed manager started %v", got)
	}
}
