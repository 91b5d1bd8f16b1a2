package cluster_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestHostilePipeline: connections send many requests whose answers are
// large and read none of them. The review saw every new connection to
// the broker stall for as long as the attacker waited: the server kept
// reading requests while their answers could not leave, and their
// charges filled the request pool (or, when the writer had taken them
// first, it held all their answers in one buffer).
func TestHostilePipeline(t *testing.T) {
	ht := openHostile(t)
	// A topic with about 3.6 MB of records, so that each Fetch answer
	// fills much of the socket's buffers.
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const bulk = "bulk"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, bulk); err != nil {
		t.Fatalf("create %s: %v", bulk, err)
	}
	for range 4 {
		r := &kgo.Record{Topic: bulk, Value: incompressible(900_000)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", bulk, err)
		}
	}
	addr, id := ht.partitionLeader(t, bulk, 0)
	rssBefore := residentBytes(t)
	pad := strings.Repeat("p", 30000)
	const conns, pipelined = 8, 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for range conns {
		h := dialHostile(t, addr)
		wg.Go(func() {
			// Writes stall once the socket's buffers are full and the
			// server reads no more, which is what it should do.
			h.SetWriteDeadline(time.Now().Add(5 * time.Second))
			for range pipelined {
				if _, err := h.send(fetchAt(bulk, 0), pad); err != nil {
					break
				}
				mu.Lock()
				sent++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("pipelined %d Fetches of about 30 KB on %d connections", sent, conns)
	// The attacker keeps the connections open and reads nothing.
	if !answersWithin(t, addr, 5*time.Second) {
		t.Errorf("broker %d answers no ApiVersions on a new connection while pipelined Fetches wait to be read", id)
	}
	t.Logf("resident memory %d → %d MiB", rssBefore>>20, residentBytes(t)>>20)
	ht.checkServing(t, "while connections read none of their answers")
}
