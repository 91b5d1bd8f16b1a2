package server

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testForwarder forwards to the controllers at addrs (by id), asking
// controller() who is active.
func testForwarder(t *testing.T, addrs map[int32]string, controller func() int32, timeout time.Duration) *forwarder {
	t.Helper()
	var mu sync.Mutex
	f := &forwarder{
		id: 101, log: slog.New(slog.DiscardHandler),
		ch: &controllerChannel{
			from: 101, cfg: wire.ClientConfig{From: 101, DialTimeout: time.Second},
			address: func(id int32) (string, bool) {
				mu.Lock()
				defer mu.Unlock()
				a, ok := addrs[id]
				return a, ok
			},
			clients: map[int32]*wire.Client{},
		},
		controller: controller,
		timeout:    timeout, tryTimeout: time.Second, backoff: 5 * time.Millisecond,
		apis: forwardedAPIs,
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	t.Cleanup(f.close)
	return f
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveForwarder puts f on a listener of its own, as a broker's Mux does.
func serveForwarder(t *testing.T, f *forwarder) string {
	t.Helper()
	mux := wire.NewMux()
	if err := f.register(mux); err != nil {
		t.Fatal(err)
	}
	ln, err := wire.Listen(wire.ServerConfig{NodeID: 101, APIs: mux.APIs(), Handler: mux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr()
}

func str(s string) *string { return &s }

func forwardedRequests() []kmsg.Request {
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 7
	for _, name := range []string{"orders", "clicks"} {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, 3, 1
		ct.Topics = append(ct.Topics, t)
	}
	dtOld := kmsg.NewPtrDeleteTopicsRequest()
	dtOld.Version, dtOld.TopicNames = 5, []string{"orders", "clicks"}
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version = 6
	byName, byID := kmsg.NewDeleteTopicsRequestTopic(), kmsg.NewDeleteTopicsRequestTopic()
	byName.Topic, byID.TopicID = str("orders"), [16]byte{9: 1}
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{byName, byID}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "orders", 6
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{cpt}
	dq := kmsg.NewPtrDescribeQuorumRequest()
	return []kmsg.Request{ct, dtOld, dt, cp, dq}
}

// topicErrors lists the error codes a forwarded API's answer carries, per
// topic (DescribeQuorum: its top-level one), with the topic's name or id.
func topicErrors(resp kmsg.Response) (names []string, codes []int16) {
	switch r := resp.(type) {
	case *kmsg.CreateTopicsResponse:
		for _, t := range r.Topics {
			names, codes = append(names, t.Topic), append(codes, t.ErrorCode)
		}
	case *kmsg.DeleteTopicsResponse:
		for _, t := range r.Topics {
			name := "id:" + string(rune('0'+t.TopicID[9]))
			if t.Topic != nil {
				name = *t.Topic
			}
			names, codes = append(names, name), append(codes, t.ErrorCode)
		}
	case *kmsg.CreatePartitionsResponse:
		for _, t := range r.Topics {
			names, codes = append(names, t.Topic), append(codes, t.ErrorCode)
		}
	case *kmsg.DescribeQuorumResponse:
		names, codes = []string{"-"}, []int16{r.ErrorCode}
	}
	return names, codes
}

// With no controller to reach, a client gets each API's answer with
// REQUEST_TIMED_OUT for every topic it named, at its own version, as
// Kafka's getErrorResponse(TimeoutException) answers a forward that timed
// out.
func TestForwardWithoutControllerTimesOutPerTopic(t *testing.T) {
	for _, who := range []struct {
		name       string
		controller int32
	}{{"no controller known", -1}, {"controller unreachable", 1}} {
		t.Run(who.name, func(t *testing.T) {
			f := testForwarder(t, map[int32]string{1: deadAddr(t)}, func() int32 { return who.controller }, 150*time.Millisecond)
			addr := serveForwarder(t, f)
			want := map[int16][]string{
				kmsg.CreateTopics.Int16():     {"orders", "clicks"},
				kmsg.CreatePartitions.Int16(): {"orders"},
				kmsg.DescribeQuorum.Int16():   {"-"},
			}
			for _, req := range forwardedRequests() {
				resp := do(t, addr, req)
				names, codes := topicErrors(resp)
				wantNames := want[req.Key()]
				if req.Key() == kmsg.DeleteTopics.Int16() {
					wantNames = []string{"orders", "clicks"}
					if req.GetVersion() >= 6 {
						wantNames = []string{"orders", "id:1"}
					}
				}
				if resp.GetVersion() != req.GetVersion() || len(names) != len(wantNames) {
					t.Fatalf("%s v%d: answer v%d topics %v, want %v", kmsg.NameForKey(req.Key()), req.GetVersion(), resp.GetVersion(), names, wantNames)
				}
				for i := range names {
					if names[i] != wantNames[i] || codes[i] != kerr.RequestTimedOut.Code {
						t.Errorf("%s v%d: topic %s error %d, want %s REQUEST_TIMED_OUT", kmsg.NameForKey(req.Key()), req.GetVersion(), names[i], codes[i], wantNames[i])
					}
				}
			}
		})
	}
}

// fakeController answers the forwarded APIs: with NOT_CONTROLLER while
// active() is false, else with success, counting what it got.
type fakeController struct {
	id     int32
	active atomic.Bool
	got    atomic.Int32
	addr   string
}

func startFakeController(t *testing.T, id int32) *fakeController {
	t.Helper()
	fc := &fakeController{id: id}
	mux := wire.NewMux()
	h := wire.HandlerFunc(func(req *wire.Request) {
		fc.got.Add(1)
		code := int16(0)
		if !fc.active.Load() {
			code = kerr.NotController.Code
		}
		switch r := req.Body.(type) {
		case *kmsg.CreateTopicsRequest:
			resp := kmsg.NewPtrCreateTopicsResponse()
			for _, t := range r.Topics {
				rt := kmsg.NewCreateTopicsResponseTopic()
				rt.Topic, rt.ErrorCode, rt.NumPartitions = t.Topic, code, t.NumPartitions
				resp.Topics = append(resp.Topics, rt)
			}
			req.Respond(resp)
		case *kmsg.DescribeQuorumRequest:
			resp := kmsg.NewPtrDescribeQuorumResponse()
			if code != 0 {
				resp.ErrorCode = kerr.NotLeaderForPartition.Code
			}
			req.Respond(resp)
		}
	})
	for _, api := range []wire.APIRange{createTopicsVersions, describeQuorumVersions} {
		if err := mux.Handle(api, h); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := wire.Listen(wire.ServerConfig{NodeID: id, APIs: mux.APIs(), Handler: mux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	fc.addr = ln.Addr()
	return fc
}

// A controller that is no longer active answers NOT_CONTROLLER; the
// forwarder asks again who is active and sends there, as Kafka's
// NodeToControllerRequestThread requeues the request.
func TestForwardFollowsTheActiveController(t *testing.T) {
	c1, c2 := startFakeController(t, 1), startFakeController(t, 2)
	c2.active.Store(true)
	var asked atomic.Int32
	// The broker's raft client first still believes in 1, then learns 2.
	controller := func() int32 {
		if asked.Add(1) == 1 {
			return 1
		}
		return 2
	}
	f := testForwarder(t, map[int32]string{1: c1.addr, 2: c2.addr}, controller, 10*time.Second)
	addr := serveForwarder(t, f)
	req := forwardedRequests()[0].(*kmsg.CreateTopicsRequest)
	req.Version = 5
	resp := do(t, addr, req).(*kmsg.CreateTopicsResponse)
	if resp.Version != 5 || len(resp.Topics) != 2 || resp.Topics[0].ErrorCode != 0 || resp.Topics[0].NumPartitions != 3 {
		t.Fatalf("answer %+v", resp)
	}
	if c1.got.Load() != 1 || c2.got.Load() != 1 {
		t.Errorf("controller 1 got %d, controller 2 got %d requests, want 1 each", c1.got.Load(), c2.got.Load())
	}
	asked.Store(0)
	dq := do(t, addr, kmsg.NewPtrDescribeQuorumRequest()).(*kmsg.DescribeQuorumResponse)
	if dq.ErrorCode != 0 || c2.got.Load() != 2 {
		t.Errorf("DescribeQuorum: error %d, controller 2 got %d", dq.ErrorCode, c2.got.Load())
	}
}

// A broker advertises a forwarded API only at the versions its
// controllers serve too, and not at all if they serve none.
func TestForwardedVersionsAreCutToTheController(t *testing.T) {
	got := cutToController(forwardedAPIs, []wire.APIRange{
		{Key: kmsg.CreateTopics.Int16(), MinVersion: 0, MaxVersion: 5},
		{Key: kmsg.DeleteTopics.Int16(), MinVersion: 4, MaxVersion: 9},
		{Key: kmsg.DescribeQuorum.Int16(), MinVersion: 3, MaxVersion: 4},
	})
	want := []wire.APIRange{
		{Key: kmsg.CreateTopics.Int16(), MinVersion: 2, MaxVersion: 5},
		{Key: kmsg.DeleteTopics.Int16(), MinVersion: 4, MaxVersion: 6},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d APIs: %+v", len(got), got)
	}
	for i := range want {
		if got[i].api != want[i] {
			t.Errorf("API %d: %+v, want %+v", i, got[i].api, want[i])
		}
	}
}

// Closing the forwarder answers a forward still trying, and returns.
func TestForwarderCloseAnswersWhatIsInFlight(t *testing.T) {
	f := testForwarder(t, map[int32]string{}, func() int32 { return -1 }, time.Hour)
	addr := serveForwarder(t, f)
	c, err := wire.NewClient(wire.ClientConfig{From: 900, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answered := make(chan kmsg.Response, 1)
	if err := c.Send(context.Background(), forwardedRequests()[0], func(r kmsg.Response, err error) { answered <- r }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the forward to be in flight", func() bool { return f.queueLength.Load() == 1 })
	f.close()
	select {
	case r := <-answered:
		if _, codes := topicErrors(r); len(codes) != 2 || codes[0] != kerr.RequestTimedOut.Code {
			t.Errorf("answer on close: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("close did not answer the forward in flight")
	}
	if r := do(t, addr, forwardedRequests()[3]); r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Errorf("after close: %+v", r)
	}
}
