package wire

import (
	"bytes"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// parker parks every DescribeQuorum it is handed and echoes the rest.
type parker chan *Request

func (p parker) ServeKafka(r *Request) {
	if _, ok := r.Body.(*kmsg.DescribeQuorumRequest); ok {
		p <- r
		return
	}
	echo(r)
}

func describeQuorum() *kmsg.DescribeQuorumRequest {
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	return dq
}

// A stranger has one request in the server at a time, as Kafka mutes a
// channel; a member pipelines.
func TestStrangerHasOneRequestInFlight(t *testing.T) {
	parked := make(parker, 4)
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), handler: parked})
	raw := dialRaw(t, s.Addr())
	dq := describeQuorum()
	first, second := raw.send(t, dq), raw.send(t, dq)
	r := <-parked
	select {
	case <-parked:
		t.Fatal("a stranger's second request was read while its first was parked")
	case <-time.After(200 * time.Millisecond):
	}
	echo(r)
	raw.recv(t, dq, 1, first)
	echo(<-parked)
	raw.recv(t, dq, 1, second)

	// A member's requests are all read while the first is parked.
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism(testSecret)})
	do(t, c, voteRequest(1, false)) // logged in
	done := make(chan error, 2)
	for range 2 {
		if err := c.Send(t.Context(), dq, func(_ kmsg.Response, err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
	}
	a, b := <-parked, <-parked
	echo(a)
	echo(b)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A request the handler parks keeps charged only what it holds: not its
// frame (nothing points into it) and not a hundred times the frame.
func TestParkedRequestKeepsWhatItHolds(t *testing.T) {
	parked := make(parker, 1)
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), handler: parked})
	dq := describeQuorum()
	for i := range 2000 {
		tp := kmsg.NewDescribeQuorumRequestTopic()
		tp.Topic = strings.Repeat("t", 20) + string(rune('a'+i%26))
		dq.Topics = append(dq.Topics, tp)
	}
	frame := len(kmsg.NewRequestFormatter().AppendRequest(nil, dq, 1))
	raw := dialRaw(t, s.Addr())
	corr := raw.send(t, dq)
	r := <-parked
	real := heldBytes(r.Body)
	eventually(t, "the parked request's charge cut to what it holds", func() bool {
		return s.others.frames.inUse() == 0 && s.others.decoded.inUse() == real
	})
	t.Logf("a parked %d-byte DescribeQuorum is charged %d bytes (%d before it was parked)", frame, real, frame*(1+decodeAmplification))
	if real >= int64(frame)*decodeAmplification/4 {
		t.Errorf("it holds %d bytes, about the worst a %d-byte frame may decode into", real, frame)
	}
	echo(r)
	raw.recv(t, dq, 1, corr)
	eventually(t, "the pools to drain", func() bool { return s.members.inUse()+s.others.inUse() == 0 })
}

// A stranger's close is noticed while its request is parked, with or
// without bytes it pipelined behind it; the parked request keeps its
// charge until the handler answers it.
func TestStrangerCloseNoticedWhileParked(t *testing.T) {
	parked := make(parker, 1)
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), handler: parked})
	for _, behind := range []int{0, 2} {
		if behind > 0 && runtime.GOOS != "linux" {
			continue // seen through TCP_INFO only
		}
		raw := dialRaw(t, s.Addr())
		raw.send(t, describeQuorum())
		r := <-parked
		for range behind {
			raw.send(t, describeQuorum())
		}
		raw.Close()
		select {
		case <-r.Closed():
		case <-time.After(10 * time.Second):
			t.Fatalf("a close behind %d pipelined requests was not noticed while a request was parked", behind)
		}
		if s.others.inUse() == 0 {
			t.Error("the parked request gave its charge back while the handler still holds it")
		}
		echo(r)
		eventually(t, "the pools to drain", func() bool { return s.members.inUse()+s.others.inUse() == 0 })
	}
}

// Strangers that announce frames and send them a byte at a time hold the
// strangers' pools, never the members': a member logs in and is served.
func TestSlowStrangersCannotStarveMembers(t *testing.T) {
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), pool: 1 << 20})
	for range 8 {
		raw := dialRaw(t, s.Addr())
		head := be.AppendUint32(nil, 512<<10)
		raw.Write(append(head, 0, 55)) // DescribeQuorum's key, and no more
	}
	eventually(t, "the strangers to hold their pool", func() bool { return s.others.frames.inUse() >= 1<<20 })
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism(testSecret)})
	checkVote(t, do(t, c, voteRequest(4, false)), 4, false)
}

// A stranger that reads none of its answers makes the server read no more
// of its requests: it holds no pool, and new connections are served.
func TestNonReadingStrangerHoldsNothing(t *testing.T) {
	big := bytes.Repeat([]byte{'b'}, 4<<20)
	var served atomic.Int32
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: quorumAPIs, handler: HandlerFunc(func(r *Request) {
		if f, ok := r.Body.(*kmsg.FetchRequest); ok {
			served.Add(1)
			resp := fetchEcho(f)
			resp.Topics[0].Partitions[0].RecordBatches = big
			r.Respond(resp)
			return
		}
		echo(r)
	})})
	raw := dialRaw(t, s.Addr())
	f := fetchRequest(12, -1)
	var pipelined []byte
	for range 50 {
		raw.corr++
		pipelined = raw.f.AppendRequest(pipelined, f, raw.corr)
	}
	raw.SetWriteDeadline(time.Now().Add(10 * time.Second))
	go raw.Write(pipelined)
	eventually(t, "the stranger's first Fetch served", func() bool { return served.Load() > 0 })
	other := dialRaw(t, s.Addr())
	dq := describeQuorum()
	other.recv(t, dq, 1, other.send(t, dq))
	eventually(t, "the non-reading stranger to hold no pool", func() bool { return s.others.inUse() == 0 })
	// Its reader stopped once an answer could not be written: a few
	// 4 MiB answers fill the sockets' buffers.
	if n := served.Load(); n > 10 {
		t.Errorf("the server read %d of the stranger's requests while it read no answer", n)
	}
}

// A peer that takes none of its answers is closed after FrameTimeout: it
// has given them up, and they would stay in the server's memory.
func TestAnswersNotTakenAreDropped(t *testing.T) {
	big := bytes.Repeat([]byte{'b'}, 16<<20)
	s, logs := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: quorumAPIs, frameTimeout: 200 * time.Millisecond,
		handler: HandlerFunc(func(r *Request) {
			resp := fetchEcho(r.Body.(*kmsg.FetchRequest))
			resp.Topics[0].Partitions[0].RecordBatches = big
			r.Respond(resp)
		})})
	raw := dialRaw(t, s.Addr())
	raw.send(t, fetchRequest(12, -1))
	wantLog(t, logs, "closing connection", "write responses", "i/o timeout")
	eventually(t, "the connection closed", func() bool {
		open, _ := openConns(s)
		return open == 0
	})
}
