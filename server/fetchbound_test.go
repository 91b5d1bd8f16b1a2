package server

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fillLed produces n batches of size bytes each to "led" and returns the
// bytes the log holds.
func fillLed(t *testing.T, rm *ReplicaManager, n, size int) int {
	t.Helper()
	total := 0
	for i := range n {
		b := batch(fmt.Sprintf("%d-%s", i, strings.Repeat("x", size)))
		if rp := syncProduce(t, rm, produceReq(13, 1, "", ledID, 0, b)); rp.ErrorCode != 0 {
			t.Fatalf("produce: %+v", rp)
		}
		total += len(b)
	}
	return total
}

// The hostile review's fetch: one partition named seven times, MaxBytes
// and PartitionMaxBytes 2^31-1. The answer names the partition once, and
// holds no more than fetch.max.bytes plus one batch, whatever it asks.
func TestFetchIsBoundedAndServesAPartitionOnce(t *testing.T) {
	rm := replicaRig(t)
	rm.limits.fetchMaxBytes = 64 << 10
	held := fillLed(t, rm, 40, 8<<10)
	r := fetchReq(-1, ledID, 0, 0, 0)
	r.MaxBytes = math.MaxInt32
	p := r.Topics[0].Partitions[0]
	p.PartitionMaxBytes = math.MaxInt32
	r.Topics[0].Partitions = nil
	for range 7 {
		r.Topics[0].Partitions = append(r.Topics[0].Partitions, p)
	}
	r.Topics = append(r.Topics, r.Topics[0]) // and the topic twice
	resp := wait(t, asyncFetch(rm, r, false))
	var parts []kmsg.FetchResponseTopicPartition
	for _, tp := range resp.Topics {
		parts = append(parts, tp.Partitions...)
	}
	if len(parts) != 1 {
		t.Fatalf("the partition is answered %d times", len(parts))
	}
	got := len(parts[0].RecordBatches)
	if got == 0 || got > rm.limits.fetchMaxBytes+9<<10 {
		t.Fatalf("answer of %d bytes from a log of %d, fetch.max.bytes %d", got, held, rm.limits.fetchMaxBytes)
	}
	t.Logf("log %d bytes, answer %d bytes", held, got)
}

// A follower's fetch is bounded by replica.fetch.response.max.bytes too,
// and the first partition's first batch comes whole however small its
// PartitionMaxBytes (Kafka's minOneMessage; partition.FetchParams.Fitting
// leaves out the first batch of later partitions that does not fit).
func TestFetchBoundsFollowersAndLaterPartitions(t *testing.T) {
	rm := replicaRig(t)
	if got := rm.fetchMaxBytes(102, math.MaxInt32); got != rm.limits.replicaFetchResponseMaxBytes {
		t.Fatalf("a follower may fetch %d bytes, want replica.fetch.response.max.bytes %d", got, rm.limits.replicaFetchResponseMaxBytes)
	}
	if got := rm.fetchMaxBytes(-1, math.MaxInt32); got != DefaultFetchMaxBytes {
		t.Fatalf("a consumer may fetch %d bytes, want fetch.max.bytes %d", got, DefaultFetchMaxBytes)
	}
	if got := rm.fetchMaxBytes(-1, -5); got != 0 {
		t.Fatalf("a negative MaxBytes gives %d", got)
	}
	fillLed(t, rm, 3, 4<<10)
	r := fetchReq(-1, ledID, 0, 0, 0)
	r.MaxBytes = 6 << 10
	first := r.Topics[0].Partitions[0]
	first.PartitionMaxBytes = 1 // one whole batch comes anyway
	r.Topics[0].Partitions = []kmsg.FetchRequestTopicPartition{first}
	resp := wait(t, asyncFetch(rm, r, false))
	if n := len(resp.Topics[0].Partitions[0].RecordBatches); n < 4<<10 {
		t.Fatalf("the first partition's first batch did not come whole: %d bytes", n)
	}
}

// A broker opens at most max.broker.partitions replicas, whatever the
// metadata assigns it (data written before the controller's cap, or
// under a higher one): the rest are not hosted, and hold no files.
func TestBrokerHostsAtMostMaxBrokerPartitions(t *testing.T) {
	rm := replicaRigWith(t, storage.FlushNever, dataLimits{maxPartitions: 2})
	rm.mu.RLock()
	n := len(rm.hosted)
	rm.mu.RUnlock()
	if n != 2 {
		t.Fatalf("%d replicas hosted of the rig's 3, max.broker.partitions 2", n)
	}
}
