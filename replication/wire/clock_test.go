package wire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quietFor is how long a test watches for what must not happen while the
// clock is paused: longer than the calls' timeouts.
const quietFor = 300 * time.Millisecond

type answer struct {
	epoch int32
	err   error
}

func sendVotes(t *testing.T, c *Client, epochs []int32, timeout time.Duration, out chan<- answer) {
	t.Helper()
	for _, e := range epochs {
		err := c.SendWithin(timeout, voteRequest(e, false), func(resp kmsg.Response, err error) {
			if err != nil {
				out <- answer{err: err}
				return
			}
			out <- answer{epoch: resp.(*kmsg.VoteResponse).Topics[0].Partitions[0].LeaderEpoch}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// While the clock is paused the links hold every request before it is
// written and every response after it is read, and no call times out;
// on resume they all go on, in order.
func TestPausedClockHoldsLinks(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)

	clk.Pause()
	served := p.served[2].Load()
	out := make(chan answer, 8)
	sendVotes(t, c, []int32{2, 3, 4, 5}, 100*time.Millisecond, out)
	select {
	case a := <-out:
		t.Fatalf("answered while paused: %+v", a)
	case <-time.After(quietFor):
	}
	if n := p.served[2].Load(); n != served {
		t.Fatalf("the server saw %d requests while paused", n-served)
	}
	clk.Resume()
	for _, want := range []int32{2, 3, 4, 5} {
		if a := <-out; a.err != nil || a.epoch != want {
			t.Fatalf("after the resume: %+v, want epoch %d", a, want)
		}
	}

	// A response read while paused waits too.
	p.hold.Store(true)
	sendVotes(t, c, []int32{6}, 100*time.Millisecond, out)
	r := <-p.parked
	clk.Pause()
	echo(r)
	select {
	case a := <-out:
		t.Fatalf("response delivered while paused: %+v", a)
	case <-time.After(quietFor):
	}
	clk.Resume()
	if a := <-out; a.err != nil || a.epoch != 6 {
		t.Fatalf("after the resume: %+v", a)
	}
}

// Slowed down, a link's delay lasts as many times longer on the wall.
func TestSlowClockScalesLinkDelay(t *testing.T) {
	p := newPlayground(t, 1, 1, 2)
	clk := clock.New()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: p.servers[2].Addr(), Links: p.links, Counters: p.counters, Clock: clk})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)
	p.set(1, 2, LinkState{Delay: 20 * time.Millisecond})
	if err := clk.SetSlow(10); err != nil {
		t.Fatal(err)
	}
	start, cluster := time.Now(), clk.Now()
	checkVote(t, do(t, c, voteRequest(2, false)), 2, false)
	if wall := time.Since(start); wall < 200*time.Millisecond {
		t.Fatalf("a 20ms link delay took %v of wall at slow 10", wall)
	}
	if d := clk.Since(cluster); d < 20*time.Millisecond {
		t.Fatalf("a 20ms link delay took %v of cluster time", d)
	}
	// The call's timeout is cluster time too: 50ms of it is 500ms of wall.
	p.set(1, 2, LinkState{Delay: time.Hour})
	out := make(chan answer, 1)
	start = time.Now()
	sendVotes(t, c, []int32{3}, 50*time.Millisecond, out)
	if a := <-out; !errors.Is(a.err, context.DeadlineExceeded) || time.Since(start) < 500*time.Millisecond {
		t.Fatalf("call of 50ms at slow 10 ended with %v after %v", a.err, time.Since(start))
	}
}
