package wire

import (
	"bytes"
	"io"
	"net"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// denseFetch is a Fetch v12 request frame of about size bytes holding as
// many empty topics (3 bytes each) as fit: the review's probe.
func denseFetch(size int) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.Topics = make([]kmsg.FetchRequestTopic, (size-64)/3)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("probe")).AppendRequest(nil, req, 1)
}

// heapSampler records the peak of HeapInuse while it runs.
type heapSampler struct {
	base, peak uint64
	stop, done chan struct{}
}

func sampleHeap() *heapSampler {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h := &heapSampler{base: m.HeapInuse, peak: m.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			h.peak = max(h.peak, m.HeapInuse)
			select {
			case <-h.stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return h
}

// grown stops the sampler and returns the peak above the start, in MiB.
func (h *heapSampler) grown() float64 {
	close(h.stop)
	<-h.done
	return float64(h.peak-h.base) / (1 << 20)
}

// TestDefaultCapRefusesHugeFrames is the review's first probe at the
// default config: three ~100 MB Fetch frames at once. The controller cap
// refuses each from its size, before anything is allocated.
func TestDefaultCapRefusesHugeFrames(t *testing.T) {
	s, logs := startServer(t, serverOpts{})
	h := sampleHeap()
	head := denseFetch(100)[:4]
	be.PutUint32(head, 100_000_000)
	for range 3 {
		raw := dialRaw(t, s.Addr())
		raw.Write(append(head, make([]byte, 1<<20)...))
		raw.expectClosed(t)
	}
	if g := h.grown(); g > 32 {
		t.Errorf("heap grew %.0f MiB", g)
	}
	wantLog(t, logs, "frame too large: 100000000 bytes, max 1048576")
}

// TestPoolBoundsDecodedRequests is the first probe with the frame cap
// raised: three dense Fetch frames at once, parked by the handler. Before
// the pool all three were read and decoded (about 22 times their size
// each); now the first one's charge exhausts the pool, so the others wait
// unread until it is answered, and every one is served in the end.
func TestPoolBoundsDecodedRequests(t *testing.T) {
	const size = maxStructuredFrame - 1024
	frame := denseFetch(size)
	// What decoding one of them allocates, here (the race detector
	// changes it).
	single := float64(measureDecode(func() message { return kmsg.NewPtrFetchRequest() }, 12, frame[4+8+2+5+1:])) / (1 << 20)
	parked := make(chan *Request, 3)
	s, _ := startServer(t, serverOpts{maxFrame: 4 << 20, pool: 8 << 20, handler: HandlerFunc(func(r *Request) { parked <- r })})
	h := sampleHeap()
	var raws []*rawConn
	for range 3 {
		raw := dialRaw(t, s.Addr())
		raws = append(raws, raw)
		go raw.Write(frame)
	}
	var got []*Request
	got = append(got, <-parked)
	// The others stay unread while the first holds the pool.
	eventually(t, "the other frames to wait for the pool", func() bool { return s.members.decoded.inUse() >= 8<<20 })
	select {
	case r := <-parked:
		t.Fatalf("a second request (conn %d) was decoded while the pool was exhausted", r.ConnID)
	case <-time.After(200 * time.Millisecond):
	}
	grown := h.grown()
	t.Logf("peak heap +%.0f MiB with one of three 1 MiB dense Fetch frames decoded", grown)
	// One decoded frame is about 22 MiB; three were 67.
	if limit := 1.5*single + 3*size>>20 + 8; grown > limit {
		t.Errorf("heap grew %.0f MiB, more than %.0f: want the pool to hold it to about one decoded frame (%.0f MiB)", grown, limit, single)
	}
	for len(got) < 3 {
		got[len(got)-1].Respond(kmsg.NewPtrFetchResponse())
		got = append(got, <-parked)
	}
	got[2].Respond(kmsg.NewPtrFetchResponse())
	eventually(t, "the pool to drain", func() bool { return s.members.inUse()+s.others.inUse() == 0 })
	for _, raw := range raws {
		raw.Close()
	}
}

// TestPoolBoundsPartialFrames is the second probe: ten connections each
// send most of a large announced frame and stall. Before the pool each
// held its partial frame (the review measured 1.6 GB for 10 x 99 of 100
// MiB); now one holds the pool and the others wait unread.
func TestPoolBoundsPartialFrames(t *testing.T) {
	const size, sent = 24 << 20, 20 << 20
	payload := make([]byte, sent)
	be.PutUint32(payload, size)
	s, _ := startServer(t, serverOpts{maxFrame: 32 << 20, pool: 8 << 20})
	h := sampleHeap()
	var wg sync.WaitGroup
	var raws []*rawConn
	for range 10 {
		raw := dialRaw(t, s.Addr())
		raws = append(raws, raw)
		wg.Go(func() { raw.Write(payload) })
	}
	eventually(t, "one partial frame to hold the pool", func() bool { return s.members.frames.inUse() >= size })
	time.Sleep(200 * time.Millisecond) // give the others time to misbehave
	grown := h.grown()
	t.Logf("peak heap +%.0f MiB with 10 x %d of %d MiB partial frames", grown, sent>>20, size>>20)
	if grown > 80 {
		t.Errorf("heap grew %.0f MiB, want about one partial frame", grown)
	}
	for _, raw := range raws {
		raw.Close()
	}
	wg.Wait()
	eventually(t, "the pool to drain", func() bool { return s.members.inUse()+s.others.inUse() == 0 })
}

func TestFrameTimeoutClosesStalledFrame(t *testing.T) {
	s, logs := startServer(t, serverOpts{frameTimeout: 100 * time.Millisecond})
	raw := dialRaw(t, s.Addr())
	frame := appendRequest(nil, voteRequest(1, false), 1, "t")
	raw.Write(frame[:len(frame)-1])
	raw.expectClosed(t)
	wantLog(t, logs, "not complete within 100ms")
	eventually(t, "the pool to drain", func() bool { return s.members.inUse()+s.others.inUse() == 0 })
}

func TestIdleTimeout(t *testing.T) {
	parked := make(chan *Request, 1)
	s, logs := startServer(t, serverOpts{idleTimeout: 100 * time.Millisecond, handler: HandlerFunc(func(r *Request) {
		if _, ok := r.Body.(*kmsg.VoteRequest); ok {
			parked <- r
			return
		}
		echo(r)
	})})
	idle := dialRaw(t, s.Addr())
	// A connection with a request in flight is not idle.
	busy := dialRaw(t, s.Addr())
	vote := voteRequest(1, false)
	corr := busy.send(t, vote)
	r := <-parked
	idle.expectClosed(t)
	wantLog(t, logs, "closing idle connection", "peer="+idle.LocalAddr().String())
	time.Sleep(250 * time.Millisecond) // more than the idle timeout
	echo(r)
	checkVote(t, busy.recv(t, vote, 2, corr), 1, false)
	busy.expectClosed(t) // idle once answered
}

func TestMaxConnectionsWaitsForASlot(t *testing.T) {
	s, _ := startServer(t, serverOpts{maxConns: 2})
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	a, b := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	a.recv(t, dq, 1, a.send(t, dq))
	b.recv(t, dq, 1, b.send(t, dq))
	// The third connects (the listen backlog) but is not served...
	c := dialRaw(t, s.Addr())
	corr := c.send(t, dq)
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.br.Peek(1); err == nil {
		t.Fatal("a third connection was served over max connections 2")
	}
	// ...until a slot frees.
	a.Close()
	c.recv(t, dq, 1, corr)
}

// A connection over max.connections.per.ip is closed at its first request
// (other than ApiVersions and a login), where Kafka closes it at accept: it
// might be a member, which is exempt.
func TestMaxConnectionsPerIPClosesAtFirstRequest(t *testing.T) {
	s, logs := startServer(t, serverOpts{maxPerIP: 1})
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	a := dialRaw(t, s.Addr())
	a.recv(t, dq, 1, a.send(t, dq))
	b := dialRaw(t, s.Addr())
	b.send(t, dq)
	b.expectClosed(t)
	wantLog(t, logs, "closing connection", "over max.connections.per.ip (1)")
	a.recv(t, dq, 1, a.send(t, dq))
}

// TestIdleConnectionsAreCheap: an idle connection costs one goroutine (it
// cost two), and the connection cap bounds them.
func TestIdleConnectionsAreCheap(t *testing.T) {
	s, _ := startServer(t, serverOpts{})
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	before := runtime.NumGoroutine()
	var conns []net.Conn
	for range 200 {
		raw := dialRaw(t, s.Addr())
		raw.recv(t, dq, 1, raw.send(t, dq))
		conns = append(conns, raw)
	}
	eventually(t, "writers to exit", func() bool { return runtime.NumGoroutine()-before <= 200 })
	for _, c := range conns {
		c.Close()
	}
}

// TestNoResponseBeforeClose checks that a refused request gets no bytes.
func TestNoResponseBeforeClose(t *testing.T) {
	s, _ := startServer(t, serverOpts{})
	raw := dialRaw(t, s.Addr())
	raw.Write(rawRequest(0, 3, 1)) // Produce: not served
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _ := io.Copy(io.Discard, raw.br)
	if n != 0 {
		t.Fatalf("got %d bytes before the close", n)
	}
}

// TestPoolNeverDeadlocks: frames that together pass the pool before any of
// them is decoded are all served (with one pool for frames and decoding
// they waited on each other for ever).
func TestPoolNeverDeadlocks(t *testing.T) {
	// Three frames of which only one fits the pool at a time; small enough
	// that decoding them one by one under the race detector on a loaded
	// machine stays well inside the reads' deadline.
	frame := denseFetch(512 << 10)
	s, _ := startServer(t, serverOpts{maxFrame: 1 << 20, pool: 768 << 10, handler: HandlerFunc(func(r *Request) { r.Respond(kmsg.NewPtrFetchResponse()) })})
	var wg sync.WaitGroup
	for range 3 {
		raw := dialRaw(t, s.Addr())
		wg.Go(func() {
			raw.Write(frame)
			req := kmsg.NewPtrFetchRequest()
			req.Version = 12
			raw.recv(t, req, 12, 1)
		})
	}
	wg.Wait()
	eventually(t, "the pools to drain", func() bool { return s.members.inUse()+s.others.inUse() == 0 })
}

// TestDecodeAmplificationBound checks decodeAmplification against the
// probes of amp_test.go for every version of the requests kraftlab serves.
func TestDecodeAmplificationBound(t *testing.T) {
	for _, key := range servedAPIs {
		for v := int16(0); v <= kmsg.RequestForKey(key).MaxVersion(); v++ {
			ps := probeAmplification(func() message { return kmsg.RequestForKey(key) }, v, 64<<10)
			if len(ps) > 0 && ps[0].amp() > decodeAmplification {
				t.Errorf("%s v%d: %v, more than decodeAmplification %d", kmsg.NameForKey(key), v, ps[0], decodeAmplification)
			}
		}
	}
}

// FuzzDecodeAmplification decodes Fetch and Produce requests from large
// bodies (the input repeated to 256 KiB behind a fuzzed prefix, far past any
// frame cap's worth of elements) and checks that decoding allocates at most
// decodeAmplification bytes per body byte, the charge the server makes.
func FuzzDecodeAmplification(f *testing.F) {
	f.Add(uint8(12), false, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x7f}, []byte{1, 1, 0})
	f.Add(uint8(9), true, []byte{0, 0, 1, 0, 0, 0, 0xff, 0xff, 0x7f}, []byte{1, 1, 1, 0x8f, 0x4e, 0})
	f.Add(uint8(4), false, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0x00, 0x00}, []byte{0, 0})
	f.Fuzz(func(t *testing.T, version uint8, produce bool, prefix, unit []byte) {
		if len(unit) == 0 || len(prefix) > 1024 {
			return
		}
		var mk func() message
		if produce {
			mk = func() message { return kmsg.NewPtrProduceRequest() }
		} else {
			mk = func() message { return kmsg.NewPtrFetchRequest() }
		}
		m := mk()
		req := m.(kmsg.Request)
		v := int16(version) % (req.MaxVersion() + 1)
		body := append([]byte(nil), prefix...)
		for len(body) < 256<<10 {
			body = append(body, unit...)
		}
		if alloc := measureDecode(mk, v, body); alloc > decodeAmplification*uint64(len(body))+4096 {
			t.Fatalf("%s v%d: %d bytes decode into %d (%.1fx), more than decodeAmplification %d",
				kmsg.NameForKey(req.Key()), v, len(body), alloc, float64(alloc)/float64(len(body)), decodeAmplification)
		}
	})
}

// produceAPIs are quorumAPIs with Produce, as a broker serves it.
func produceAPIs() []APIRange {
	return append(slices.Clone(quorumAPIs), APIRange{Key: produceKey, MinVersion: 3, MaxVersion: 11})
}

// A Produce as large as the broker's socket.request.max.bytes is read and
// charged what its structure decodes into, not a hundred times its frame.
func TestLargeProduceIsServed(t *testing.T) {
	parked := make(chan *Request, 1)
	s, _ := startServer(t, serverOpts{apis: produceAPIs(), maxFrame: DefaultMaxFrameSize, handler: HandlerFunc(func(r *Request) { parked <- r })})
	records := bytes.Repeat([]byte{'r'}, 600_000)
	req := produceRequest(9, records, records)
	raw := dialRaw(t, s.Addr())
	corr := raw.send(t, req)
	r := <-parked
	if got := s.members.decoded.inUse(); got > 4<<10 {
		t.Errorf("a Produce of two 600 KB batches is charged %d bytes for decoding", got)
	}
	r.Respond(kmsg.NewPtrProduceResponse())
	raw.recv(t, req, 9, corr)
	eventually(t, "the pools to drain", func() bool { return s.members.inUse()+s.others.inUse() == 0 })
}

// A dense Produce (empty partitions, each with an unknown tagged field)
// decodes like any other request: one whose structure would take more
// than maxDecodeCharge is refused.
func TestDenseProduceIsRefused(t *testing.T) {
	s, logs := startServer(t, serverOpts{apis: produceAPIs(), maxFrame: DefaultMaxFrameSize})
	req := produceRequest(9)
	req.Topics[0].Partitions = make([]kmsg.ProduceRequestTopicPartition, 200_000)
	for i := range req.Topics[0].Partitions {
		setTag(reflect.ValueOf(&req.Topics[0].Partitions[i]).Elem())
	}
	raw := dialRaw(t, s.Addr())
	raw.send(t, req)
	raw.expectClosed(t)
	wantLog(t, logs, "would decode into", "more than the 104857600 a request may")
}

// A request other than Produce over 1 MiB is refused from its size and
// API key, before its body is read.
func TestLargeRequestOtherThanProduceIsRefusedUnread(t *testing.T) {
	s, logs := startServer(t, serverOpts{apis: produceAPIs(), maxFrame: DefaultMaxFrameSize})
	raw := dialRaw(t, s.Addr())
	head := be.AppendUint32(nil, 2<<20)
	raw.Write(append(head, 0, 1)) // Fetch, and nothing more
	raw.expectClosed(t)
	wantLog(t, logs, "Fetch request of 2097152 bytes: requests other than Produce may have at most 1048576")
}
