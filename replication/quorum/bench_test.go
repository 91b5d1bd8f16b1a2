package quorum

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// benchRecordSize is the record value size the throughput figures use.
const benchRecordSize = 100

// BenchmarkCommit measures commit throughput and latency of three voters
// over loopback TCP: each operation appends one 100-byte record to the
// leader and waits until the high watermark passes it. clients goroutines
// do that in a closed loop; with one client, ns/op is the commit latency,
// with many the records batch up (one raft append per loop iteration, one
// fetch carrying them all). Quorum timing is Kafka's defaults except
// controller.quorum.append.linger.ms = 0: batching comes from the appends
// that queue while the leader writes, not from a timer.
func BenchmarkCommit(b *testing.B) {
	for _, flush := range []storage.FlushPolicy{storage.FlushNever, storage.FlushAlways} {
		for _, clients := range []int{1, 64, 512} {
			b.Run(fmt.Sprintf("flush=%v/clients=%d", flush, clients), func(b *testing.B) {
				benchCommit(b, flush, clients)
			})
		}
	}
}

func benchCommit(b *testing.B, flush storage.FlushPolicy, clients int) {
	c := newBenchCluster(b, flush)
	leader := c.nodes[c.leaderID]
	// Warm up: connections, segment files, the page cache.
	for range 200 {
		if _, err := leader.appendNow(make([]byte, benchRecordSize)).Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	b.SetBytes(benchRecordSize)
	b.ResetTimer()
	start := time.Now()
	for i := range clients {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds := make([]time.Duration, 0, n)
			for range n {
				rec := make([]byte, benchRecordSize)
				t0 := time.Now()
				if _, err := leader.appendNow(rec).Wait(ctx); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				ds = append(ds, time.Since(t0))
			}
			lat[i] = ds
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(percentile(all, 0.50).Seconds()*1e6, "p50-µs")
	b.ReportMetric(percentile(all, 0.99).Seconds()*1e6, "p99-µs")
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

type benchCluster struct {
	nodes    map[int32]*testNode
	leaderID int32
}

func newBenchCluster(b *testing.B, flush storage.FlushPolicy) *benchCluster {
	b.Helper()
	var mu sync.Mutex
	addrs := map[int32]string{}
	peers := func(id int32) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := addrs[id]
		return a, ok
	}
	c := &benchCluster{nodes: map[int32]*testNode{}}
	dir := b.TempDir()
	voters := []int32{1, 2, 3}
	for _, id := range voters {
		rc := testRaftConfig()
		rc.NodeID, rc.Voters = id, voters
		rc.AppendLinger = 0
		rc.FetchTimeout, rc.RequestTimeout, rc.FetchMaxWait = 2*time.Second, 2*time.Second, 500*time.Millisecond
		q, err := NewNode(Config{Raft: rc, Dir: fmt.Sprintf("%s/%d", dir, id), Peers: peers, Flush: flush, NewListener: func() Listener { return &tallyListener{} }})
		if err != nil {
			b.Fatal(err)
		}
		n := &testNode{Node: q}
		if err := n.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		addrs[id] = n.Addr()
		mu.Unlock()
		c.nodes[id] = n
	}
	b.Cleanup(func() {
		for _, n := range c.nodes {
			n.Kill()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for c.leaderID == 0 {
		if time.Now().After(deadline) {
			b.Fatal("no leader")
		}
		for id, n := range c.nodes {
			if n.Status().Writable {
				c.leaderID = id
			}
		}
		time.Sleep(time.Millisecond)
	}
	return c
}

// BenchmarkLoopbackRTT measures the floor under every quorum exchange on
// this machine: a 100-byte ping-pong over a loopback TCP connection, and a
// Kafka request (ApiVersions, answered by the wire server itself) over a
// wire.Client.
func BenchmarkLoopbackRTT(b *testing.B) {
	b.Run("tcp", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			buf := make([]byte, benchRecordSize)
			for {
				if _, err := io.ReadFull(conn, buf); err != nil {
					return
				}
				if _, err := conn.Write(buf); err != nil {
					return
				}
			}
		}()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, benchRecordSize)
		ds := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if _, err := conn.Write(buf); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(conn, buf); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
		}
		b.StopTimer()
		conn.Close()
		<-done
		slices.Sort(ds)
		b.ReportMetric(percentile(ds, 0.50).Seconds()*1e6, "p50-µs")
		b.ReportMetric(percentile(ds, 0.99).Seconds()*1e6, "p99-µs")
	})
	b.Run("kafka-request", func(b *testing.B) {
		srv, err := wire.Listen(wire.ServerConfig{APIs: VoterAPIs, Handler: wire.HandlerFunc(func(*wire.Request) {})})
		if err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		cl, err := wire.NewClient(wire.ClientConfig{From: 1, To: 2, Addr: srv.Addr()})
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		ctx := context.Background()
		ds := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if _, err := cl.Do(ctx, kmsg.NewPtrApiVersionsRequest()); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(t0))
		}
		b.StopTimer()
		slices.Sort(ds)
		b.ReportMetric(percentile(ds, 0.50).Seconds()*1e6, "p50-µs")
		b.ReportMetric(percentile(ds, 0.99).Seconds()*1e6, "p99-µs")
	})
}
