package wire

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func entryField(e TraceEntry, name string) string {
	for _, f := range e.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

func describeTrace(l *Links) func() string {
	return func() string {
		var b strings.Builder
		for _, e := range l.Trace(0) {
			fmt.Fprintf(&b, "\n#%d %d→%d %v %v corr %d held %d orders %d..%d", e.Seq, e.Link.From, e.Link.To, e.Dir, e.Fate, e.Corr, e.Held, e.SentOrder, e.EndOrder)
		}
		return b.String()
	}
}

// A round trip through the links leaves its request and its response in
// the trace, paired by connection and correlation id, in happens-before
// order, with the fields of their small frames decoded when read.
func TestTraceRecordsARoundTrip(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	before := clk.Now()
	checkVote(t, do(t, c, voteRequest(7, true)), 7, true)
	after := clk.Now()

	tr := p.links.Trace(0)
	if len(tr) != 2 {
		t.Fatalf("trace of one round trip: %s", describeTrace(p.links)())
	}
	req, resp := tr[0], tr[1]
	if req.Seq != 1 || req.Link != (LinkID{1, 2}) || req.Dir != DirRequest || req.Key != 52 || req.Version != 2 || req.Fate != FateDelivered || req.Held != 0 {
		t.Fatalf("request: %+v", req)
	}
	if resp.Seq != 2 || resp.Link != (LinkID{2, 1}) || resp.Dir != DirResponse || resp.Key != 52 || resp.Fate != FateDelivered {
		t.Fatalf("response: %+v", resp)
	}
	if req.Conn == 0 || req.Conn != resp.Conn || req.Corr != resp.Corr {
		t.Fatalf("request and response not paired: conn %d/%d corr %d/%d", req.Conn, resp.Conn, req.Corr, resp.Corr)
	}
	if !(req.SentOrder < req.EndOrder && req.EndOrder < resp.SentOrder && resp.SentOrder < resp.EndOrder) {
		t.Fatalf("orders out of happens-before: request %d..%d, response %d..%d", req.SentOrder, req.EndOrder, resp.SentOrder, resp.EndOrder)
	}
	for _, e := range tr {
		if e.Sent.Before(before) || e.Delivered.Before(e.Sent) || e.Delivered.After(after) || e.Bytes < 20 {
			t.Fatalf("%v sent %v delivered %v (round trip between %v and %v), %d bytes", e.Dir, e.Sent, e.Delivered, before, after, e.Bytes)
		}
	}
	if entryField(req, "candidate epoch") != "7" || entryField(req, "pre-vote") != "true" || entryField(resp, "granted") != "true" || req.SummaryErr != "" {
		t.Fatalf("fields: request %+v, response %+v", req.Fields, resp.Fields)
	}
	// Trace(n) is the last n.
	if last := p.links.Trace(1); len(last) != 1 || last[0].Seq != 2 || entryField(last[0], "epoch") != "7" {
		t.Fatalf("Trace(1): %+v", last)
	}
}

// While the clock is paused a held message is in flight in the trace,
// with its held ID; stepped it is delivered, dropped it is dropped, and
// its summary is the one listing it decoded.
func TestTraceHeldMessagesAreInFlight(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)

	clk.Pause()
	out := make(chan answer, 4)
	sendVotes(t, c, []int32{2, 3}, 100*time.Millisecond, out)
	poll.Until(t, 10*time.Second, "two requests held", func() bool { return len(heldWhere(p.links, DirRequest)) == 2 }, describeHeld(p.links))
	held := heldWhere(p.links, DirRequest)
	tr := p.links.Trace(2)
	for i, e := range tr {
		if e.Fate != FateInFlight || e.Held != held[i].ID || !e.Delivered.IsZero() || e.EndOrder != 0 || entryField(e, "candidate epoch") != fmt.Sprint(i+2) {
			t.Fatalf("held request %d in the trace: %+v (held %+v)", i, e, held[i])
		}
	}
	if _, err := p.links.Drop(func(h Held) bool { return h.ID == held[0].ID }); err != nil {
		t.Fatal(err)
	}
	if _, err := p.links.Step(func(h Held) bool { return h.ID == held[1].ID }); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the response to the stepped request held", func() bool { return len(heldWhere(p.links, DirResponse)) == 1 }, describeTrace(p.links))
	poll.Until(t, 10*time.Second, "the dropped request dropped and the stepped one delivered", func() bool {
		tr := p.links.Trace(0)
		return len(tr) == 5 && tr[2].Fate == FateDropped && tr[3].Fate == FateDelivered && tr[4].Fate == FateInFlight
	}, describeTrace(p.links))
	tr = p.links.Trace(0)
	dropped, stepped, resp := tr[2], tr[3], tr[4]
	if dropped.EndOrder == 0 || !dropped.Delivered.IsZero() || stepped.EndOrder <= dropped.EndOrder || resp.SentOrder <= stepped.EndOrder {
		t.Fatalf("orders: dropped %+v, stepped %+v, response %+v", dropped, stepped, resp)
	}
	// Paused, cluster time stands still: the order tells what came first.
	if !stepped.Delivered.Equal(stepped.Sent) {
		t.Fatalf("paused, the stepped request was sent at %v and delivered at %v", stepped.Sent, stepped.Delivered)
	}
	if resp.Corr != stepped.Corr || resp.Conn != stepped.Conn || entryField(resp, "epoch") != "3" {
		t.Fatalf("held response %+v does not answer %+v", resp, stepped)
	}
	clk.Resume()
	poll.Until(t, 10*time.Second, "the response delivered after resume", func() bool { return p.links.Trace(0)[4].Fate == FateDelivered }, describeTrace(p.links))
	if a := <-out; a.err != nil || a.epoch != 3 {
		t.Fatalf("stepped vote answered %+v", a)
	}
	if a := <-out; a.err == nil {
		t.Fatalf("dropped vote answered %+v", a)
	}
}

// A lossy link's messages are lost in the trace, and a message held
// when its connection dies is cut.
func TestTraceLostAndCut(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)
	p.set(1, 2, LinkState{Loss: 1})
	if _, err := tryVote(c, 2, 50*time.Millisecond); err == nil {
		t.Fatal("a vote crossed a link that loses everything")
	}
	tr := p.links.Trace(0)
	if lost := tr[len(tr)-1]; lost.Fate != FateLost || lost.Dir != DirRequest || lost.EndOrder != 0 || !lost.Delivered.IsZero() {
		t.Fatalf("lost request: %+v", lost)
	}
	p.links.HealAll()

	clk.Pause()
	out := make(chan answer, 1)
	sendVotes(t, c, []int32{3}, time.Hour, out)
	poll.Until(t, 10*time.Second, "the request held", func() bool { return len(p.links.HeldMessages()) == 1 }, describeHeld(p.links))
	p.set(1, 2, LinkState{Down: true}) // cuts the connection
	if a := <-out; a.err == nil {
		t.Fatalf("a vote on a cut connection answered %+v", a)
	}
	poll.Until(t, 10*time.Second, "the held request cut", func() bool {
		tr := p.links.Trace(0)
		return tr[len(tr)-1].Fate == FateCut
	}, describeTrace(p.links))
	clk.Resume()
}

// A frame too large to keep a copy of is summarised only while the clock
// is slowed or paused, from the message itself.
func TestTraceSummarisesLargeFramesOnlyWhileWatched(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	big := voteRequest(4, false)
	big.ClusterID = kmsg.StringPtr(strings.Repeat("k", 2*traceFrameBytes))
	do(t, c, big)
	if e := p.links.Trace(0)[0]; e.Bytes <= traceFrameBytes || e.Fields != nil {
		t.Fatalf("a %d-byte frame summarised at normal speed: %+v", e.Bytes, e.Fields)
	}
	if err := clk.SetSlow(2); err != nil {
		t.Fatal(err)
	}
	do(t, c, big)
	if e := p.links.Trace(0)[2]; entryField(e, "candidate epoch") != "4" {
		t.Fatalf("a %d-byte frame slowed: %+v", e.Bytes, e)
	}
}

// The ring keeps the last TraceCapacity messages, numbered without a
// gap, and recording into it allocates nothing once it is full size.
func TestTraceRingWrapsWithoutAllocating(t *testing.T) {
	var tr trace
	frame := make([]byte, 64)
	now := time.Now()
	for i := range TraceCapacity + 10 {
		tr.record(traceSlot{link: LinkID{1, 2}, corr: int32(i), fate: FateDelivered, sent: now.UnixNano()}, frame, now)
	}
	all := tr.entries(0)
	if len(all) != TraceCapacity || all[0].Seq != 11 || all[len(all)-1].Seq != TraceCapacity+10 {
		t.Fatalf("%d entries, %d..%d", len(all), all[0].Seq, all[len(all)-1].Seq)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq != all[i-1].Seq+1 || all[i].Corr != int32(all[i].Seq-1) || all[i].SentOrder <= all[i-1].EndOrder {
			t.Fatalf("entry %d: %+v after %+v", i, all[i], all[i-1])
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		tr.record(traceSlot{link: LinkID{1, 2}, fate: FateDelivered}, frame, now)
	}); n != 0 {
		t.Fatalf("record allocates %v times", n)
	}
	// An overwritten message cannot be ended.
	seq := tr.record(traceSlot{fate: FateInFlight}, nil, now)
	for range TraceCapacity {
		tr.record(traceSlot{fate: FateInFlight}, nil, now)
	}
	tr.end(seq, FateDelivered, now, nil)
	if e := tr.entries(0)[TraceCapacity-1]; e.Seq != seq+TraceCapacity || e.Fate != FateInFlight {
		t.Fatalf("ending an overwritten message changed its slot: %+v", e)
	}
}
