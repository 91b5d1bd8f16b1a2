package fetcher

import (
	"bytes"
	"slices"
	"testing"
)

func addAll(m *Manager, leader int32, epoch int32, followers map[TopicPartition]*followerLog) {
	states := map[TopicPartition]InitialFetchState{}
	for tp, f := range followers {
		states[tp] = InitialFetchState{Leader: leader, LeaderEpoch: epoch, TopicID: topicID(tp.Topic), Replica: f, InitOffset: -1}
	}
	m.AddPartitions(states)
}

// Several partitions on one thread replicate byte for byte, the high
// watermark follows on the next fetch, and records produced later arrive
// through the long poll.
func TestReplicatesSeveralPartitionsOnOneThread(t *testing.T) {
	l := newTestLeader(1)
	followers := map[TopicPartition]*followerLog{}
	for p := range int32(3) {
		tp := TopicPartition{"orders", p}
		l.lead(tp, 1, openLog(t))
		l.produce(t, tp, 5+int(p))
		followers[tp] = newFollower(t)
	}
	m := newManager(t, network{1: l}, Config{})
	addAll(m, 1, 1, followers)
	for tp, f := range followers {
		eventually(t, tp.String()+" caught up", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
	}
	for tp := range followers {
		l.produce(t, tp, 3)
	}
	for tp, f := range followers {
		eventually(t, tp.String()+" caught up again", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
		if !bytes.Equal(f.bytes(t), leaderBytes(t, l, tp)) {
			t.Fatalf("%s: follower's log differs from the leader's", tp)
		}
	}
	s := m.Stats()
	if len(s.Threads) != 1 || s.Threads[0].Name != "ReplicaFetcherThread-0-1" || len(s.Threads[0].Partitions) != 3 {
		t.Fatalf("threads %+v, want one ReplicaFetcherThread-0-1 with 3 partitions", s.Threads)
	}
	for _, p := range s.Threads[0].Partitions {
		want := int64(5 + int(p.Partition) + 3)
		if p.Records != want || p.FetchOffset != want || p.State != Fetching || p.Lag != 0 || p.HighWatermark != want {
			t.Errorf("%s stats %+v, want %d records fetched, no lag", p.TopicPartition, p, want)
		}
	}
	if s.Threads[0].Requests == 0 || s.Threads[0].Bytes == 0 || s.Threads[0].LastResponseTime.IsZero() {
		t.Errorf("thread stats %+v count nothing", s.Threads[0])
	}
}

// With num.replica.fetchers 1 every partition of a leader shares one
// thread; with 4, each goes to the thread FetcherID names, and the threads
// carry Kafka's names.
func TestAssignmentAndThreadNames(t *testing.T) {
	for _, n := range []int{1, 4} {
		l := newTestLeader(7)
		followers := map[TopicPartition]*followerLog{}
		for _, topic := range []string{"orders", "payments", "t"} {
			for p := range int32(4) {
				tp := TopicPartition{topic, p}
				l.lead(tp, 1, openLog(t))
				followers[tp] = newFollower(t)
			}
		}
		m := newManager(t, network{7: l}, Config{NumReplicaFetchers: n})
		addAll(m, 7, 1, followers)
		want := map[string][]TopicPartition{}
		for tp := range followers {
			name := ThreadName(FetcherID(tp, n), 7)
			want[name] = append(want[name], tp)
		}
		got := map[string][]TopicPartition{}
		for _, th := range m.Stats().Threads {
			for _, p := range th.Partitions {
				got[th.Name] = append(got[th.Name], p.TopicPartition)
			}
		}
		if len(got) != len(want) || (n == 4 && len(got) != 4) {
			t.Fatalf("n=%d: threads %v, want %v", n, got, want)
		}
		for name, tps := range want {
			sortTPs(tps)
			sortTPs(got[name])
			if !slices.Equal(tps, got[name]) {
				t.Errorf("n=%d: %s has %v, want %v", n, name, got[name], tps)
			}
		}
		m.Close()
	}
}

func sortTPs(tps []TopicPartition) {
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
}

// The classic divergent tail: the follower led epoch 2 and wrote records
// nobody else has; the new leader (epoch 3) answers with DivergingEpoch,
// the follower cuts its tail at the end of epoch 1 and fetches epoch 3's
// records, ending byte for byte equal to the leader.
func TestTruncatesDivergentTailOnDivergingEpoch(t *testing.T) {
	tp := TopicPartition{"orders", 0}
	leaderLog := openLog(t)
	appendRecords(t, leaderLog, 1, 5)
	appendRecords(t, leaderLog, 3, 5)
	l := newTestLeader(2)
	l.lead(tp, 3, leaderLog)

	f := newFollower(t)
	appendRecords(t, f.log, 1, 5)
	appendRecords(t, f.log, 2, 3) // the divergent tail, offsets 5-7
	if !bytes.Equal(f.bytes(t)[:len(readPrefix(t, leaderLog, 5))], readPrefix(t, leaderLog, 5)) {
		t.Fatal("the common prefix differs: the test's logs are wrong")
	}
	m := newManager(t, network{2: l}, Config{})
	addAll(m, 2, 3, map[TopicPartition]*followerLog{tp: f})
	eventually(t, "caught up after truncation", func() bool { return caughtUp(t, l, tp, f) }, statsOf(m))
	if !bytes.Equal(f.bytes(t), leaderBytes(t, l, tp)) {
		t.Fatal("follower's log differs from the leader's after truncation")
	}
	p := m.Stats().Threads[0].Partitions[0]
	if p.Truncations != 1 || p.Records != 5 || p.LastFetchedEpoch != 3 {
		t.Fatalf("stats %+v, want one truncation and epoch 3's 5 records fetched", p)
	}
}

// readPrefix is the bytes of the batches below offset end.
func readPrefix(t *testing.T, log interface {
	Read(int64, int) ([]byte, error)
}, end int64) []byte {
	t.Helper()
	var out []byte
	for off := int64(0); off < end; off++ {
		b, err := log.Read(off, 1)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}
