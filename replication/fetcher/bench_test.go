package fetcher

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/storage"
)

// BenchmarkReplicateCatchUp measures a follower catching up from empty on
// a leader holding 20,000 batches of 10 records (100-byte values) in one
// partition, over the in-memory leader (no sockets): the fetcher's loop,
// the leader's reads and the follower's appends with their checks.
func BenchmarkReplicateCatchUp(b *testing.B) {
	tp := TopicPartition{"bench", 0}
	leaderLog, err := storage.Open(b.TempDir(), storage.Options{FlushPolicy: storage.FlushNever})
	if err != nil {
		b.Fatal(err)
	}
	defer leaderLog.Close()
	value := make([]byte, 100)
	recs := make([]storage.Record, 10)
	for i := range recs {
		recs[i].Value = value
	}
	for range 20000 {
		if _, _, err := leaderLog.AppendAsLeader(recs, 1, 1700000000000); err != nil {
			b.Fatal(err)
		}
	}
	l := newTestLeader(1)
	l.lead(tp, 1, leaderLog)
	end := leaderLog.LogEndOffset()
	size := int64(len(readAll(b, leaderLog)))
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		f := &followerLog{}
		f.log, err = storage.Open(b.TempDir(), storage.Options{FlushPolicy: storage.FlushNever})
		if err != nil {
			b.Fatal(err)
		}
		m, err := NewManager(Config{BrokerID: 2, Send: network{1: l}.send, FetchWaitMax: 10 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		m.AddPartitions(map[TopicPartition]InitialFetchState{tp: {Leader: 1, LeaderEpoch: 1, TopicID: topicID(tp.Topic), Replica: f, InitOffset: -1}})
		poll.Until(b, time.Minute, "caught up", func() bool { return f.LogEndOffset() == end })
		b.StopTimer()
		m.Close()
		f.log.Close()
		b.StartTimer()
	}
}
