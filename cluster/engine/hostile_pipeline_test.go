package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestHostilePipeline: connections send requests whose answers are large
// and read none of them, then pipeline more. The review saw every new
// connection to the broker stall for as long as the attacker waited: the
// server kept reading requests while their answers could not leave, and
// their charges filled the request pool.
func TestHostilePipeline(t *testing.T) {
	ht := openHostile(t)
	// A topic with about 7 MB of records, the size of a Fetch answer.
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const bulk = "bulk"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, bulk); err != nil {
		t.Fatalf("create %s: %v", bulk, err)
	}
	for range 8 {
		r := &kgo.Record{Topic: bulk, Value: incompressible(900_000)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", bulk, err)
		}
	}
	addr, id := ht.partitionLeader(t, bulk, 0)
	rssBefore := residentBytes(t)
	pad := strings.Repeat("p", 30000)
	const conns, pipelined = 2, 40
	sent := 0
	for range conns {
		h := dialHostile(t, addr)
		// Ten answers of 7 MB: more than the sockets' buffers take
		// (the kernel grows a loopback socket's to tens of MB).
		for range 10 {
			if _, err := h.send(fetchAt(bulk, 0), "big"); err != nil {
				t.Fatal(err)
			}
		}
		// The answers have started: the server's writer holds them and
		// waits for the attacker to read, which it never does.
		h.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := h.br.Peek(1); err != nil {
			t.Fatalf("no answer to the first Fetch: %v", err)
		}
		// Writes stall once the socket's buffers are full and the
		// server reads no more, which is what it should do.
		h.SetWriteDeadline(time.Now().Add(5 * time.Second))
		for range pipelined {
			if _, err := h.send(fetchAt(bulk, 0), pad); err != nil {
				break
			}
			sent++
		}
	}
	t.Logf("%d connections each pipelined up to %d Fetches of about 30 KB behind an answer they do not read: %d sent",
		conns, pipelined, sent)
	// New connections are served for as long as the attack lasts (the
	// server takes a second or two to read the first answers from disk).
	probes := time.NewTicker(500 * time.Millisecond)
	defer probes.Stop()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); <-probes.C {
		if !answersWithin(t, addr, 5*time.Second) {
			t.Fatalf("broker %d answers no ApiVersions on a new connection while pipelined Fetches wait", id)
		}
	}
	t.Logf("resident memory %d → %d MiB", rssBefore>>20, residentBytes(t)>>20)
	ht.checkServing(t, "while connections read none of their answers")
}
