package wire

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// BenchmarkRoundTrip measures one request/response over loopback: a raw
// 64-byte TCP ping-pong for reference, then a small Vote through our Client
// and Server (allocations count both sides), with and without Links and
// Counters in the path.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("tcp-ping-pong-64B", benchTCPPingPong)
	b.Run("vote", func(b *testing.B) { benchVote(b, false) })
	b.Run("vote-links-counters", func(b *testing.B) { benchVote(b, true) })
}

func benchTCPPingPong(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		var buf [64]byte
		for {
			if _, err := io.ReadFull(nc, buf[:]); err != nil {
				return
			}
			if _, err := nc.Write(buf[:]); err != nil {
				return
			}
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	var buf [64]byte
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nc.Write(buf[:]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(nc, buf[:]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	nc.Close()
	ln.Close()
	<-done
}

func benchVote(b *testing.B, routed bool) {
	cfg := ServerConfig{NodeID: 2, APIs: quorumAPIs, Handler: HandlerFunc(echo)}
	ccfg := ClientConfig{From: 1, To: 2}
	if routed {
		counters := NewCounters()
		cfg.Counters, ccfg.Counters, ccfg.Links = counters, counters, NewLinks(1)
	}
	s, err := Listen(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ccfg.Addr = s.Addr()
	c, err := NewClient(ccfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	req := voteRequest(1, true)
	if _, err := c.Do(ctx, req); err != nil { // dial outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Do(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTraceRecord measures what tracing adds to each message the
// links pass at normal speed: one lock and a copy of a Fetch-sized frame
// into the full ring.
func BenchmarkTraceRecord(b *testing.B) {
	var tr trace
	frame := make([]byte, 120)
	now := time.Now()
	for range TraceCapacity {
		tr.record(traceSlot{fate: FateDelivered}, frame, now)
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.record(traceSlot{link: LinkID{2, 1}, key: 1, fate: FateDelivered, sent: now.UnixNano()}, frame, now)
	}
}
