package engine_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/poll"
)

// TestHostileParkedFetch: a Fetch that would wait for ever (MinBytes and
// MaxWaitMs 2^31-1) with twelve requests behind it, each with a 32 KiB
// client id, then a close. The review saw the canary's broker answer
// nothing for a minute: the requests behind the parked Fetch held the
// request pool, and the closed connection's reader never noticed the
// close. The attack is repeated with smaller requests behind the Fetch,
// so closed connections that are never noticed would pile up as open
// files. (The first one's close waits behind more unread bytes than the
// socket's buffer takes, so it reaches the server only once the parked
// Fetch ends, after 30 s at most.)
func TestHostileParkedFetch(t *testing.T) {
	ht := openHostile(t)
	addr, _ := ht.canaryLeader(t)
	filesBefore, _ := openFiles(t)
	const attacks = 20
	for i := range attacks {
		h := dialHostile(t, addr)
		hwm := h.highWatermark(t, canaryTopic)
		park := fetchAt(canaryTopic, hwm)
		park.MinBytes, park.MaxWaitMillis = math.MaxInt32, math.MaxInt32
		if _, err := h.send(park, "parker"); err != nil {
			t.Fatal(err)
		}
		pad := strings.Repeat("x", 32000)
		if i > 0 {
			pad = pad[:2000]
		}
		for range 12 {
			if _, err := h.send(apiVersions(), pad); err != nil {
				t.Fatal(err)
			}
		}
		h.Close()
	}
	if !answersWithin(t, addr, 5*time.Second) {
		t.Errorf("the canary's broker answers no ApiVersions on a new connection after %d parked Fetches", attacks)
	}
	ht.checkServing(t, "after parked Fetches with large requests behind them")
	// The server notices each close although a parked request and
	// unread requests stand in front of it.
	files, _ := openFiles(t)
	t.Logf("open files: %d before the attacks, %d just after", filesBefore, files)
	poll.Until(t, 10*time.Second, "the attacks' closed connections to be let go", func() bool {
		files, _ = openFiles(t)
		return files-filesBefore < 5
	}, func() string { return fmt.Sprintf("open files: %d before the attacks, %d now", filesBefore, files) })
}

// fetchAt is a consumer's Fetch v12 of partition 0 of topic at offset,
// answered at once.
func fetchAt(topic string, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 8 << 20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset, fp.PartitionMaxBytes = offset, 8<<20
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	return req
}

// highWatermark fetches partition 0 of topic once and returns its high
// watermark.
func (h *hostileConn) highWatermark(t *testing.T, topic string) int64 {
	t.Helper()
	req := fetchAt(topic, 0)
	if _, err := h.send(req, "probe"); err != nil {
		t.Fatal(err)
	}
	resp, err := h.recv(req, 10*time.Second)
	if err != nil {
		t.Fatalf("fetch %s: %v", topic, err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 || fr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch %s: %+v", topic, fr)
	}
	return fr.Topics[0].Partitions[0].HighWatermark
}

// canaryLeader returns the listener and id of the broker that leads the
// canary partition.
func (ht *hostileTarget) canaryLeader(t *testing.T) (string, int32) {
	t.Helper()
	return ht.partitionLeader(t, canaryTopic, 0)
}

// partitionLeader returns the listener and id of the broker that leads
// partition p of topic.
func (ht *hostileTarget) partitionLeader(t *testing.T, topic string, p int32) (string, int32) {
	t.Helper()
	v := ht.p.View()
	part, ok := v.Partition(topic, p)
	if !ok || part.Leader < 0 {
		t.Fatalf("%s-%d has no leader", topic, p)
	}
	n, ok := v.Node(part.Leader)
	if !ok {
		t.Fatalf("leader %d of %s-%d is not a node", part.Leader, topic, p)
	}
	return n.Listener, n.ID
}
