package control

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

type served struct {
	session Session
	client  *Client
	pg      *cluster.Playground
	srv     *Server
	ln      *Listener
	downs   chan struct{}
}

// serve runs the API for a model playground on a fresh session socket, the
// way `kraftlab up` does, and tears it down at the end of the test.
func serve(t *testing.T) *served {
	t.Helper()
	return serveWith(t, NewServer)
}

// serveWith is serve with the server made by newSrv.
func serveWith(t *testing.T, newSrv func(cluster.Operator, func()) *Server) *served {
	t.Helper()
	return serveModel(t, newSrv, clustertest.Options{})
}

// serveModel is serveWith for a model with options opt.
func serveModel(t *testing.T, newSrv func(cluster.Operator, func()) *Server, opt clustertest.Options) *served {
	t.Helper()
	s, err := NewSession(shortDir(t), "t")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := cluster.NewConfig(3, 1, cluster.ProfileFast, nil, "")
	pg, err := cluster.OpenWith(context.Background(), cfg, clustertest.Start(opt))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	downs := make(chan struct{}, 1)
	srv := newSrv(pg, func() { downs <- struct{}{} })
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	c := NewClient(s)
	// A server that stops answering fails the test instead of hanging it.
	c.http.Timeout = time.Minute
	t.Cleanup(func() {
		c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		pg.Close()
		ln.Close()
	})
	return &served{session: s, client: c, pg: pg, srv: srv, ln: ln, downs: downs}
}

// raw sends a request and returns the status and the decoded error message.
func (s *served) raw(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	resp, err := s.client.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/") {
		t.Errorf("%s %s: content type %q", method, path, ct)
	}
	b, _ := io.ReadAll(resp.Body)
	var eb errorBody
	json.Unmarshal(b, &eb)
	return resp.StatusCode, eb.Error
}

func TestStatusAndActions(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	v, err := s.client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.LeaderID != 1 || len(v.CurrentVoters) != 3 || len(v.Nodes) != 4 || v.Profile != "fast" {
		t.Fatalf("status %+v", v)
	}
	res, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()})
	if err != nil || res.Message != "killed node 1 (the leader of epoch 1)" || res.Action != cluster.ActKill {
		t.Fatalf("kill leader = %+v, %v", res, err)
	}
	v, _ = s.client.Status(ctx)
	if v.Baseline == nil || v.Baseline.LeaderID != 1 || v.LeaderID == 1 {
		t.Errorf("after kill: leader %d, baseline %+v", v.LeaderID, v.Baseline)
	}
	two, three := condition.NodeID(2), condition.NodeID(3)
	for _, a := range []cluster.Action{
		{Kind: cluster.ActLink, Node: two, Peer: three, DelayMs: 100, JitterMs: 10, Loss: 0.25, OneWay: true},
		{Kind: cluster.ActPartition, Node: two, Peer: condition.NodeID(101)},
		{Kind: cluster.ActHeal, Node: two, Peer: condition.NodeID(101)},
		{Kind: cluster.ActIsolate, Node: three},
		{Kind: cluster.ActDisk, Node: three, DelayMs: 250},
		{Kind: cluster.ActHeal},
		{Kind: cluster.ActStart, Node: condition.NodeID(1)},
		{Kind: cluster.ActSnapshot, Node: condition.LeaderRef()},
		{Kind: cluster.ActResign},
		{Kind: cluster.ActStop, Node: three},
		{Kind: cluster.ActLoad, RecordsPerSec: 300, RecordBytes: 50},
	} {
		if res, err := s.client.Do(ctx, a); err != nil || res.Message == "" {
			t.Errorf("%s = %+v, %v", a, res, err)
		}
	}
	v, _ = s.client.Status(ctx)
	if n, _ := v.Node(3); n.DiskDelayMs != 250 {
		t.Errorf("disk 3 --delay 250ms: node 3's view says %d ms", n.DiskDelayMs)
	}
	if l := v.Link(2, 3); l.DelayMs != 0 || l.Loss != 0 {
		t.Errorf("heal left link 2->3 as %+v", l)
	}
	if n, _ := v.Node(3); n.State != view.StateStopped {
		t.Errorf("node 3 %s", n.State)
	}
	if v.Load.RecordsPerSec != 300 || v.Load.RecordBytes != 50 || v.Load.NodeID != v.LeaderID {
		t.Errorf("load over the API: %+v, leader %d", v.Load, v.LeaderID)
	}
	res, err = s.client.Do(ctx, cluster.Action{Kind: cluster.ActLoad})
	if v, _ = s.client.Status(ctx); err != nil || !strings.HasPrefix(res.Message, "load stopped") || v.Load.On() {
		t.Errorf("load stop = %+v, %v; load %+v", res, err, v.Load)
	}
}

// heal with one node goes over the API as that node's action.
func TestHealOneNodeOverTheAPI(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	three := condition.NodeID(3)
	if _, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActIsolate, Node: three}); err != nil {
		t.Fatal(err)
	}
	res, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActHeal, Node: three})
	if err != nil || res.Message != "healed every link of node 3 (6 had faults)" {
		t.Fatalf("heal 3 = %+v, %v", res, err)
	}
	if v, _ := s.client.Status(ctx); v.Link(3, 1).Down || v.Link(1, 3).Down {
		t.Errorf("links of node 3 still down: %+v %+v", v.Link(3, 1), v.Link(1, 3))
	}
}

func TestActionErrorsCarryStatusAndMessage(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	cases := []struct {
		a      cluster.Action
		status int
		kind   error
		msg    string
	}{
		{cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(9)}, http.StatusNotFound, condition.ErrUnknownNode, "unknown node 9 (nodes: 1, 2, 3, 101)"},
		{cluster.Action{Kind: cluster.ActPartition, Node: condition.NodeID(2), Peer: condition.NodeID(2)}, http.StatusBadRequest, cluster.ErrBadAction, "two different nodes"},
		{cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(2)}, http.StatusConflict, cluster.ErrNodeState, "node 2 is already running"},
		{cluster.Action{Kind: cluster.ActLink, Node: condition.NodeID(2), Peer: condition.NodeID(3), Loss: 1.5}, http.StatusBadRequest, cluster.ErrBadAction, "loss 1.5 must be between 0 and 1"},
		{cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()}, http.StatusOK, nil, ""},
		{cluster.Action{Kind: cluster.ActKill, Node: condition.LeaderRef()}, http.StatusOK, nil, ""},
		{cluster.Action{Kind: cluster.ActResign}, http.StatusConflict, condition.ErrNoLeader, "no leader right now"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: -3}, http.StatusBadRequest, cluster.ErrBadAction, "load rate -3 records/s must be between 0 (stop) and 100000"},
	}
	for _, tc := range cases {
		_, err := s.client.Do(ctx, tc.a)
		if tc.kind == nil {
			if err != nil {
				t.Errorf("%s = %v", tc.a, err)
			}
			continue
		}
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(ae.Message, tc.msg) || !errors.Is(err, tc.kind) {
			t.Errorf("%s = %v; want %d %v %q", tc.a, err, tc.status, tc.kind, tc.msg)
		}
		if errors.Is(err, cluster.ErrClosed) {
			t.Errorf("%s matches an unrelated kind", tc.a)
		}
	}
}

func TestRawHTTPErrorsAreJSON(t *testing.T) {
	s := serve(t)
	cases := []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"GET", "/v1/nope", "", 404, `no such endpoint: GET "/v1/nope"`},
		{"GET", "/v2/status", "", 404, "no such endpoint"},
		{"DELETE", "/v1/status", "", 405, `DELETE "/v1/status": use GET`},
		{"GET", "/v1/nodes/1/kill", "", 405, "use POST"},
		{"POST", "/v1/nodes/1/explode", "", 404, `no node action "explode"`},
		{"POST", "/v1/nodes/x/kill", "", 400, `bad node "x"`},
		{"POST", "/v1/links/1/2/cut", "", 404, `no link action "cut"`},
		{"POST", "/v1/links/1/y/partition", "", 400, `bad node "y"`},
		{"POST", "/v1/links/1/2/partition", `{"oneway": true, "bogus": 1}`, 400, "bad request body"},
		{"POST", "/v1/links/1/2/link", `{"delayMs": "slow"}`, 400, "bad request body"},
		{"POST", "/v1/nodes/1/disk", "", 400, `bad request body: empty; want {"delayMs": N} (0 makes the disk normal again)`},
		{"POST", "/v1/nodes/1/disk", `{"delayMs": 10001}`, 400, "disk: delayMs 10001 must be between 0 and 10000 (10s)"},
		{"POST", "/v1/nodes/1/disk", `{"delayMs": -1}`, 400, "must be between 0 and 10000"},
		{"POST", "/v1/nodes/9/disk", `{"delayMs": 5}`, 404, "unknown node 9"},
		{"GET", "/v1/events?after=-1", "", 400, "bad after="},
		{"GET", "/v1/events?follow=maybe", "", 400, "bad follow="},
		{"POST", "/v1/nodes/old-leader/kill", "", 409, "no kill, stop, isolate, resign, wipe, disk or mark yet"},
		{"POST", "/v1/load", "", 400, `bad request body: empty; want {"recordsPerSec": N, "recordBytes": B, "topic": T, "startedBy": "cli"|"scenario"|"screen"}`},
		{"POST", "/v1/load", `{"rate": 5}`, 400, `bad request body: json: unknown field "rate"`},
		{"GET", "/v1/load", "", 405, "use POST"},
		{"POST", "/v1/load", `{"recordsPerSec": 10, "recordBytes": 2000000}`, 400, "load record size 2000000 B must be between 16 B and 32 KiB"},
	}
	for _, tc := range cases {
		status, msg := s.raw(t, tc.method, tc.path, tc.body)
		if status != tc.status || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s %s = %d %q; want %d %q", tc.method, tc.path, status, msg, tc.status, tc.msg)
		}
	}
	if status, _ := s.raw(t, "POST", "/v1/links/1/2/partition", `{"oneway": true}`); status != 200 {
		t.Errorf("partition with a body = %d", status)
	}
}

func TestEventsHistoryAndFollow(t *testing.T) {
	s := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var history []cluster.Event
	for ev, err := range s.client.Events(ctx, 0, false) {
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, ev)
	}
	if len(history) != 5 || history[1].Kind != cluster.EventElection || history[4].Seq != 5 {
		t.Fatalf("history %+v, want the first election and four role changes", history)
	}
	last := history[len(history)-1].Seq

	got := make(chan cluster.Event, 100)
	ended := make(chan error, 1)
	go func() {
		for ev, err := range s.client.Events(ctx, last, true) {
			if err != nil {
				ended <- err
				return
			}
			got <- ev
		}
		ended <- nil
	}()
	if _, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(3)}); err != nil {
		t.Fatal(err)
	}
	for ev := range got {
		if ev.Seq <= last {
			t.Fatalf("followed an old event %+v", ev)
		}
		if ev.Kind == cluster.EventKill && ev.Node == 3 {
			break
		}
	}
	// Shutting the server down ends the stream cleanly.
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown with a follower attached: %v", err)
	}
	if err := <-ended; err != nil {
		t.Errorf("stream ended with %v, want a clean end", err)
	}
}

func TestEventsFollowerGoingAway(t *testing.T) {
	s := serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		for _, err := range s.client.Events(ctx, 0, true) {
			if err != nil {
				ended <- err
				return
			}
			cancel()
		}
		ended <- nil
	}()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled follow ended with %v", err)
	}
	// The server keeps serving others.
	if _, err := s.client.Status(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestDownWaitsForTheSocketToGo(t *testing.T) {
	s := serve(t)
	// What up does when asked to go down.
	go func() {
		<-s.downs
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.srv.Shutdown(ctx)
		s.pg.Close()
		s.ln.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.client.Down(ctx); err != nil {
		t.Fatalf("down = %v", err)
	}
	if _, err := s.client.Status(ctx); !isNoSession(err) {
		t.Errorf("status after down = %v", err)
	}
}

func TestClientWithoutPlayground(t *testing.T) {
	sess, _ := NewSession(shortDir(t), "gone")
	c := NewClient(sess)
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Status(ctx); !isNoSession(err) {
		t.Errorf("status = %v", err)
	}
	if _, err := c.Do(ctx, cluster.Action{Kind: cluster.ActResign}); !isNoSession(err) {
		t.Errorf("resign = %v", err)
	}
	for _, err := range c.Events(ctx, 0, true) {
		if !isNoSession(err) {
			t.Errorf("events = %v", err)
		}
	}
	if err := c.Down(ctx); !isNoSession(err) {
		t.Errorf("down = %v", err)
	}
}

// messages, step and drop cross the socket: the list comes back, and a
// step while the clock runs gets the playground's refusal as a bad action,
// not an unknown route.
func TestMessageRoutes(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	res, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActMessages})
	if err != nil || res.Action != cluster.ActMessages || res.Message == "" || len(res.Messages) != 0 {
		t.Fatalf("messages = %+v, %v", res, err)
	}
	for _, kind := range []cluster.ActionKind{cluster.ActStep, cluster.ActDrop} {
		_, err := s.client.Do(ctx, cluster.Action{Kind: kind})
		if !errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), "only while the cluster clock is paused") {
			t.Errorf("%s while running = %v, want the clock's refusal", kind, err)
		}
	}
	if _, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActMessages, All: true}); !errors.Is(err, cluster.ErrBadAction) {
		t.Errorf("messages --all = %v, want a bad action", err)
	}
}
