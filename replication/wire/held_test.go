package wire

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// heldWhere returns the held messages going dir.
func heldWhere(l *Links, dir Direction) []Held {
	var out []Held
	for _, h := range l.HeldMessages() {
		if h.Dir == dir {
			out = append(out, h)
		}
	}
	return out
}

func field(h Held, name string) string {
	for _, f := range h.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

func describeHeld(l *Links) func() string {
	return func() string { return fmt.Sprintf("%+v", l.HeldMessages()) }
}

// While paused, every held message is listed in order with its decoded
// fields; stepping one delivers exactly it and the ones before it on its
// connection, dropping one loses it silently (its caller times out on
// the cluster clock), and resuming delivers the rest in order.
func TestStepAndDropHeldMessages(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)

	clk.Pause()
	served := p.served[2].Load()
	out := make(chan answer, 8)
	sendVotes(t, c, []int32{2, 3, 4, 5, 6}, 100*time.Millisecond, out)
	poll.Until(t, 10*time.Second, "five requests held", func() bool { return len(heldWhere(p.links, DirRequest)) == 5 }, describeHeld(p.links))
	reqs := heldWhere(p.links, DirRequest)
	for i, h := range reqs {
		if h.Link != (LinkID{1, 2}) || h.Key != 52 || h.Err != "" || field(h, "candidate epoch") != fmt.Sprint(i+2) || field(h, "last offset") != "100" {
			t.Fatalf("held request %d: %+v", i, h)
		}
		if i > 0 && (h.ID <= reqs[i-1].ID || h.Corr <= reqs[i-1].Corr) {
			t.Fatalf("held requests out of order: %+v", reqs)
		}
	}

	// Stepping the second delivers the first two, in order, and no more.
	stepped, err := p.links.Step(func(h Held) bool { return h.ID == reqs[1].ID })
	if err != nil || len(stepped) != 2 || stepped[0].ID != reqs[0].ID || stepped[1].ID != reqs[1].ID {
		t.Fatalf("Step the second request: %+v, %v", stepped, err)
	}
	poll.Until(t, 10*time.Second, "two requests served", func() bool { return p.served[2].Load() == served+2 })
	poll.Until(t, 10*time.Second, "their responses held", func() bool { return len(heldWhere(p.links, DirResponse)) == 2 }, describeHeld(p.links))
	resps := heldWhere(p.links, DirResponse)
	if resps[0].Link != (LinkID{2, 1}) || resps[0].Corr != reqs[0].Corr || field(resps[0], "epoch") != "2" || field(resps[0], "granted") != "false" {
		t.Fatalf("held response: %+v", resps[0])
	}
	select {
	case a := <-out:
		t.Fatalf("answered while its response is held: %+v", a)
	default:
	}
	// The oldest across links is the third request, held before either
	// response.
	if stepped, err := p.links.Step(nil); err != nil || len(stepped) != 1 || stepped[0].ID != reqs[2].ID {
		t.Fatalf("Step the oldest: %+v, %v; want request %d", stepped, err, reqs[2].ID)
	}
	poll.Until(t, 10*time.Second, "three requests served", func() bool { return p.served[2].Load() == served+3 })
	if stepped, err := p.links.Step(func(h Held) bool { return h.Dir == DirResponse }); err != nil || len(stepped) != 1 || stepped[0].Corr != reqs[0].Corr {
		t.Fatalf("Step a response: %+v, %v", stepped, err)
	}
	if a := <-out; a.err != nil || a.epoch != 2 {
		t.Fatalf("the stepped response: %+v", a)
	}

	// Dropping the fourth request loses it: the server never sees it.
	dropped, err := p.links.Drop(func(h Held) bool { return h.Dir == DirRequest })
	if err != nil || dropped.ID != reqs[3].ID {
		t.Fatalf("Drop the next request: %+v, %v; want %d", dropped, err, reqs[3].ID)
	}
	if _, err := p.links.Drop(func(h Held) bool { return h.ID == reqs[3].ID }); !errors.Is(err, ErrNoHeldMessage) {
		t.Fatalf("Drop a dropped message: %v", err)
	}
	poll.Until(t, 10*time.Second, "the dropped request gone", func() bool {
		for _, h := range p.links.HeldMessages() {
			if h.ID == reqs[3].ID {
				return false
			}
		}
		return true
	})

	// Resume delivers the rest in order; the dropped call times out.
	clk.Resume()
	var got []answer
	for range 4 {
		got = append(got, <-out)
	}
	want := []int32{3, 4, 6}
	var timedOut int
	for _, a := range got {
		switch {
		case errors.Is(a.err, context.DeadlineExceeded):
			timedOut++
		case a.err != nil:
			t.Fatalf("after the resume: %v", a.err)
		case len(want) == 0 || a.epoch != want[0]:
			t.Fatalf("after the resume: answers %+v, want epochs 3, 4, 6 in order and one time-out", got)
		default:
			want = want[1:]
		}
	}
	if timedOut != 1 || len(want) != 0 {
		t.Fatalf("after the resume: answers %+v, want epochs 3, 4, 6 and one time-out", got)
	}
	if n := p.served[2].Load(); n != served+4 {
		t.Fatalf("the server saw %d requests, want 4 (the dropped one never)", n-served)
	}
	poll.Until(t, 10*time.Second, "nothing held", func() bool { return len(p.links.HeldMessages()) == 0 }, describeHeld(p.links))
	if _, err := p.links.Step(nil); !errors.Is(err, ErrNoHeldMessage) {
		t.Fatalf("Step with nothing held: %v", err)
	}
}

// StepAll delivers every held message while the clock stays paused.
func TestStepAllDrains(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)
	clk.Pause()
	defer clk.Resume()
	out := make(chan answer, 4)
	sendVotes(t, c, []int32{2, 3}, time.Second, out)
	poll.Until(t, 10*time.Second, "two requests held", func() bool { return len(p.links.HeldMessages()) == 2 })
	if got := p.links.StepAll(); len(got) != 2 {
		t.Fatalf("StepAll: %+v", got)
	}
	poll.Until(t, 10*time.Second, "two responses held", func() bool { return len(heldWhere(p.links, DirResponse)) == 2 }, describeHeld(p.links))
	p.links.StepAll()
	for _, want := range []int32{2, 3} {
		if a := <-out; a.err != nil || a.epoch != want {
			t.Fatalf("drained: %+v, want epoch %d", a, want)
		}
	}
	if !clk.Paused() {
		t.Fatal("StepAll resumed the clock")
	}
}

// A connection that dies leaves nothing held behind.
func TestHeldMessagesLeaveWithTheirConnection(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)
	clk.Pause()
	defer clk.Resume()
	out := make(chan answer, 4)
	sendVotes(t, c, []int32{2, 3}, time.Second, out)
	poll.Until(t, 10*time.Second, "two requests held", func() bool { return len(p.links.HeldMessages()) == 2 })
	p.set(1, 2, LinkState{Down: true})
	for range 2 {
		if a := <-out; !errors.Is(a.err, ErrLinkDown) {
			t.Fatalf("held call on a cut link: %+v", a)
		}
	}
	poll.Until(t, 10*time.Second, "nothing held", func() bool { return len(p.links.HeldMessages()) == 0 }, describeHeld(p.links))
}
