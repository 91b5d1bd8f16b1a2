package partition

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftlab/kraftlab/storage"
)

var (
	t0      = time.Unix(1_700_000_000, 0)
	topicID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)

const lag = 10 * time.Second

// open opens broker id's replica of t-0 under dir.
func open(t testing.TB, dir string, id int32, minISR int) *Partition {
	t.Helper()
	p, err := New(Config{
		Topic: "t", TopicID: topicID, Partition: 0, Dir: dir, LocalBrokerID: id,
		Log: storage.Options{FlushPolicy: storage.FlushNever}, MinInsyncReplicas: minISR,
		ReplicaLagTimeMax: lag, Now: func() time.Time { return t0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// producerBatch encodes n records as a producer would: offsets from 0, no
// leader epoch, values naming tag and their index.
func producerBatch(n int, tag string, ts int64) []byte {
	recs := make([]storage.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "%s-%d", tag, i)
	}
	return storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: -1, Timestamp: ts}, recs)
}

// mustAppend appends n records with acks=1 and returns the offsets.
func mustAppend(t testing.TB, p *Partition, n int) AppendInfo {
	t.Helper()
	info, err := p.AppendAsLeader(producerBatch(n, "v", t0.UnixMilli()), 1, t0)
	if err != nil {
		t.Fatalf("append %d records: %v", n, err)
	}
	return info
}

func wantCode(t testing.TB, err error, want *kerr.Error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %s", err, want.Message)
	}
}

// leader makes p the leader of replicas {1,2,3} with isr in epoch 1.
func leader(t testing.TB, p *Partition, isr []int32) {
	t.Helper()
	if _, err := p.MakeLeader(1, 1, []int32{1, 2, 3}, isr, t0); err != nil {
		t.Fatal(err)
	}
}

func fetch(t testing.TB, p *Partition, id int32, offset int64, now time.Time) bool {
	t.Helper()
	moved, err := p.UpdateFollowerFetch(id, -1, offset, now)
	if err != nil {
		t.Fatalf("fetch of %d at %d: %v", id, offset, err)
	}
	return moved
}

// stampedBatch is a batch as a leader stored it: n records from base in
// leader epoch epoch.
func stampedBatch(base int64, epoch int32, n int) []byte {
	recs := make([]storage.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "e%d-%d", epoch, base+int64(i))
	}
	return storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: base, LeaderEpoch: epoch, Timestamp: t0.UnixMilli()}, recs)
}

var storagePeek = storage.PeekBatch
