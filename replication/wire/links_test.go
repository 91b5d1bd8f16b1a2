package wire

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// playground is a few nodes with servers, and clients between them, wired
// through one Links and one Counters.
type playground struct {
	t        *testing.T
	links    *Links
	counters *Counters
	servers  map[int32]*Server
	served   map[int32]*atomic.Int64 // requests each server's handler saw
	hold     atomic.Bool             // servers park requests instead of answering
	parked   chan *Request
}

func newPlayground(t *testing.T, seed uint64, nodes ...int32) *playground {
	p := &playground{
		t: t, links: NewLinks(seed), counters: NewCounters(),
		servers: make(map[int32]*Server), served: make(map[int32]*atomic.Int64),
		parked: make(chan *Request, 16),
	}
	for _, id := range nodes {
		served := new(atomic.Int64)
		p.served[id] = served
		p.servers[id], _ = startServer(t, serverOpts{nodeID: id, counters: p.counters, handler: HandlerFunc(func(r *Request) {
			served.Add(1)
			if p.hold.Load() {
				p.parked <- r
				return
			}
			echo(r)
		})})
	}
	return p
}

func (p *playground) client(from, to int32) *Client {
	return newClient(p.t, ClientConfig{From: from, To: to, Addr: p.servers[to].Addr(), Links: p.links, Counters: p.counters})
}

func (p *playground) set(from, to int32, s LinkState) {
	p.t.Helper()
	if err := p.links.Set(LinkID{from, to}, s); err != nil {
		p.t.Fatal(err)
	}
}

func tryVote(c *Client, epoch int32, timeout time.Duration) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.Do(ctx, voteRequest(epoch, false))
}

func TestLinkDownRefusesCutsAndHeals(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	c := p.client(1, 2)
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)

	// A request parked on the server when the link goes down fails at
	// once, and the server sees the connection cut.
	p.hold.Store(true)
	errc := make(chan error, 1)
	if err := c.Send(context.Background(), voteRequest(2, false), func(_ kmsg.Response, err error) { errc <- err }); err != nil {
		t.Fatal(err)
	}
	r := <-p.parked
	p.set(1, 2, LinkState{Down: true})
	if err := <-errc; !errors.Is(err, ErrLinkDown) {
		t.Fatalf("parked request ended with %v, want ErrLinkDown", err)
	}
	<-r.Closed()
	p.hold.Store(false)

	// New requests are refused without reaching the server.
	before := p.served[2].Load()
	if _, err := tryVote(c, 3, 10*time.Second); !errors.Is(err, ErrLinkDown) {
		t.Fatalf("request over a down link: %v, want ErrLinkDown", err)
	}
	if got := p.served[2].Load(); got != before {
		t.Fatalf("server saw %d requests over a down link", got-before)
	}

	p.links.Heal(LinkID{1, 2})
	resp, err := tryVote(c, 4, 10*time.Second)
	if err != nil {
		t.Fatalf("after heal: %v", err)
	}
	checkVote(t, resp, 4, false)
}

func TestOneWayPartition(t *testing.T) {
	p := newPlayground(t, 1, 1, 2, 3)
	c12, c21, c13 := p.client(1, 2), p.client(2, 1), p.client(1, 3)
	p.set(1, 2, LinkState{Down: true})

	// 1's requests to 2 are refused.
	if _, err := tryVote(c12, 1, 10*time.Second); !errors.Is(err, ErrLinkDown) {
		t.Fatalf("1→2 request: %v, want ErrLinkDown", err)
	}
	// 2's requests reach 1, but 1's responses never get back to 2.
	if _, err := tryVote(c21, 2, 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("2→1 request: %v, want a timeout", err)
	}
	if got := p.served[1].Load(); got != 1 {
		t.Fatalf("node 1 served %d requests from 2, want 1", got)
	}
	// Other links are untouched.
	checkVote(t, do(t, c13, voteRequest(3, false)), 3, false)

	p.links.HealAll()
	checkVote(t, do(t, c12, voteRequest(4, false)), 4, false)
	checkVote(t, do(t, c21, voteRequest(5, false)), 5, false)
}

// lossy sends n votes at once, each with the given timeout, and returns how
// many were answered.
func lossy(t *testing.T, c *Client, n int, timeout time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var answered atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		err := c.Send(ctx, voteRequest(int32(i), false), func(resp kmsg.Response, err error) {
			defer wg.Done()
			switch {
			case err == nil:
				checkVote(t, resp, int32(i), false)
				answered.Add(1)
			case !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("vote %d: %v", i, err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	return int(answered.Load())
}

func TestLinkLoss(t *testing.T) {
	const n = 200
	// Lost messages end with this timeout, long enough that nothing else
	// does even on a loaded machine.
	const timeout = 2 * time.Second
	p := newPlayground(t, 42, 1, 2)
	c := p.client(1, 2)

	// Requests lost on 1→2 never reach the server.
	p.set(1, 2, LinkState{Loss: 0.3})
	answered := lossy(t, c, n, timeout)
	if answered < n/2 || answered > n*9/10 {
		t.Fatalf("%d of %d requests answered at 30%% loss", answered, n)
	}
	dropped := p.counters.Snapshot().Links[LinkID{1, 2}].DroppedRequests[52].Messages
	if dropped != uint64(n-answered) {
		t.Fatalf("counted %d dropped requests, %d went unanswered", dropped, n-answered)
	}
	if served := p.served[2].Load(); served != int64(answered) {
		t.Fatalf("server saw %d requests, client got %d answers", served, answered)
	}

	// Responses lost on 2→1: every request arrives, some answers do not.
	p.links.HealAll()
	p.set(2, 1, LinkState{Loss: 0.3})
	before := p.served[2].Load()
	answered = lossy(t, c, n, timeout)
	if answered < n/2 || answered > n*9/10 {
		t.Fatalf("%d of %d responses arrived at 30%% loss", answered, n)
	}
	if served := p.served[2].Load() - before; served != n {
		t.Fatalf("server saw %d of %d requests over a healthy request link", served, n)
	}
	dropped = p.counters.Snapshot().Links[LinkID{2, 1}].DroppedResponses[52].Messages
	if dropped != uint64(n-answered) {
		t.Fatalf("counted %d dropped responses, %d went unanswered", dropped, n-answered)
	}
}

func TestLinkDelayAndBandwidth(t *testing.T) {
	p := newPlayground(t, 7, 1, 2)
	c := p.client(1, 2)
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false) // dial outside the timing

	p.set(1, 2, LinkState{Delay: 40 * time.Millisecond, Jitter: 10 * time.Millisecond})
	p.set(2, 1, LinkState{Delay: 30 * time.Millisecond})
	start := time.Now()
	checkVote(t, do(t, c, voteRequest(2, false)), 2, false)
	if rtt := time.Since(start); rtt < 70*time.Millisecond {
		t.Fatalf("round trip %v over 40 ms + 30 ms links", rtt)
	}

	// Pipelined requests over a jittery link still answer in order.
	var mu sync.Mutex
	var order []int32
	var wg sync.WaitGroup
	for i := range int32(20) {
		wg.Add(1)
		err := c.Send(context.Background(), voteRequest(i, false), func(resp kmsg.Response, err error) {
			defer wg.Done()
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, resp.(*kmsg.VoteResponse).Topics[0].Partitions[0].LeaderEpoch)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for i, e := range order {
		if e != int32(i) {
			t.Fatalf("delayed responses arrived in order %v", order)
		}
	}

	// 2 KB at 20 KB/s takes at least 100 ms.
	p.links.HealAll()
	p.set(1, 2, LinkState{BandwidthBytesPerSec: 20_000})
	big := voteRequest(3, false)
	big.ClusterID = kmsg.StringPtr(string(make([]byte, 2000)))
	start = time.Now()
	do(t, c, big)
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Fatalf("2 KB over a 20 KB/s link took %v", took)
	}
}

func TestCountersCountBothDirections(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	c := p.client(1, 2)
	for i := range int32(5) {
		do(t, c, voteRequest(i, false))
	}
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	do(t, c, dq)
	// A client from outside the links counts on the server only.
	raw := dialRaw(t, p.servers[2].Addr())
	raw.recv(t, dq, 1, raw.send(t, dq))

	tr := p.counters.Snapshot()
	out, back := tr.Links[LinkID{1, 2}], tr.Links[LinkID{2, 1}]
	if got := out.Requests[52].Messages; got != 5 {
		t.Fatalf("link 1→2 carried %d Vote requests, want 5", got)
	}
	if got := back.Responses[52].Messages; got != 5 {
		t.Fatalf("link 2→1 carried %d Vote responses, want 5", got)
	}
	if got := out.Requests.Total().Messages; got != 6 {
		t.Fatalf("link 1→2 carried %d requests, want 6", got)
	}
	n1, n2 := tr.Nodes[1], tr.Nodes[2]
	if n1.RequestsSent[52] != out.Requests[52] || n1.ResponsesReceived[52] != back.Responses[52] {
		t.Fatalf("node 1 counts %+v disagree with its links %+v %+v", n1, out, back)
	}
	// The server saw the same bytes the client sent, plus the outside client.
	if n2.RequestsReceived[52] != out.Requests[52] || n2.ResponsesSent[52] != back.Responses[52] {
		t.Fatalf("node 2 counts %+v disagree with the links", n2)
	}
	if got := n2.RequestsReceived[55].Messages; got != 2 {
		t.Fatalf("node 2 received %d DescribeQuorum requests, want 2", got)
	}
	if b := out.Requests[52].Bytes; b == 0 || b%5 != 0 {
		t.Fatalf("5 equal Vote requests took %d bytes", b)
	}
}

func TestLinksRejectBadStates(t *testing.T) {
	l := NewLinks(1)
	for _, s := range []LinkState{{Loss: 1.5}, {Loss: -0.1}, {Delay: -1}, {Jitter: -1}, {BandwidthBytesPerSec: -1}} {
		if err := l.Set(LinkID{1, 2}, s); err == nil {
			t.Errorf("Set accepted %+v", s)
		}
	}
	if err := l.Set(LinkID{1, 2}, LinkState{Delay: time.Second}); err != nil {
		t.Fatal(err)
	}
	if f := l.Faults(); len(f) != 1 || f[LinkID{1, 2}].Delay != time.Second {
		t.Fatalf("faults %v", f)
	}
	l.Heal(LinkID{1, 2})
	if f := l.Faults(); len(f) != 0 {
		t.Fatalf("faults after heal %v", f)
	}
}
