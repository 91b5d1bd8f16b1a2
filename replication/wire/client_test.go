package wire

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// parkingClient is a client of a server that answers every Vote at once
// but those of epoch 1, which it hands to parked unanswered.
func parkingClient(t *testing.T, parked chan<- *Request) *Client {
	t.Helper()
	s, _ := startServer(t, serverOpts{handler: HandlerFunc(func(r *Request) {
		if r.Body.(*kmsg.VoteRequest).Topics[0].Partitions[0].CandidateEpoch == 1 {
			parked <- r
			return
		}
		echo(r)
	})})
	return newClient(t, ClientConfig{From: 1, To: 2, Addr: s.Addr()})
}

func TestClientTimeoutThenLateResponseIsDiscarded(t *testing.T) {
	parked := make(chan *Request, 2)
	c := parkingClient(t, parked)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Do(ctx, voteRequest(1, false)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	// The answer comes after the caller gave up; the connection carries on.
	echo(<-parked)
	checkVote(t, do(t, c, voteRequest(2, true)), 2, true)
}

func TestClientReconnectsAfterServerRestart(t *testing.T) {
	s, _ := startServer(t, serverOpts{})
	addr := s.Addr()
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: addr})
	checkVote(t, do(t, c, voteRequest(1, false)), 1, false)

	s.Close()
	eventually(t, "a request to the stopped server to fail", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Do(ctx, voteRequest(2, false))
		return err != nil
	})

	startServer(t, serverOpts{addr: addr})
	var resp kmsg.Response
	eventually(t, "a request to the restarted server to succeed", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var err error
		resp, err = c.Do(ctx, voteRequest(3, true))
		return err == nil
	})
	checkVote(t, resp, 3, true)
}

// fakeServer accepts connections and answers each request frame with
// answer(correlation id); it is a server that can send bad responses.
func fakeServer(t *testing.T, answer func(conn int, corr int32) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for n := 0; ; n++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(nc)
			var size [4]byte
			for {
				frame, err := readFrame(br, &size, 1<<20)
				if err != nil {
					break
				}
				if _, err := nc.Write(answer(n, int32(be.Uint32(frame[4:])))); err != nil {
					break
				}
			}
			nc.Close()
		}
	}()
	return ln.Addr().String()
}

func TestClientUndecodableResponseFailsAndRedials(t *testing.T) {
	addr := fakeServer(t, func(conn int, corr int32) []byte {
		if conn == 0 {
			// Header v1, then a Vote body cut short.
			return append(be.AppendUint32(nil, 7), byte(corr>>24), byte(corr>>16), byte(corr>>8), byte(corr), 0, 0, 0)
		}
		resp := kmsg.NewPtrVoteResponse()
		resp.Version = 2
		return appendResponse(nil, resp, corr)
	})
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Do(ctx, voteRequest(1, false))
	if err == nil || !strings.Contains(err.Error(), "decode Vote v2 response") {
		t.Fatalf("got %v, want a decode error", err)
	}
	if _, err := c.Do(ctx, voteRequest(2, false)); err != nil {
		t.Fatalf("request after a bad response: %v", err)
	}
}

func TestClientRejectsOversizeResponse(t *testing.T) {
	s, _ := startServer(t, serverOpts{})
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: s.Addr(), MaxFrameSize: 64})
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 17
	ft := kmsg.NewFetchRequestTopic()
	for i := range int32(10) {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = i
		ft.Partitions = append(ft.Partitions, fp)
	}
	fetch.Topics = append(fetch.Topics, ft)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Do(ctx, fetch); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("got %v, want ErrFrameTooLarge", err)
	}
}

func TestClientCloseFailsOutstandingRequests(t *testing.T) {
	parked := make(chan *Request, 1)
	s, _ := startServer(t, serverOpts{handler: HandlerFunc(func(r *Request) { parked <- r })})
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: s.Addr()})
	errc := make(chan error, 1)
	if err := c.Send(context.Background(), voteRequest(1, false), func(_ kmsg.Response, err error) { errc <- err }); err != nil {
		t.Fatal(err)
	}
	r := <-parked
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("outstanding request ended with %v, want ErrClosed", err)
	}
	<-r.Closed() // the server saw the connection go
	if err := c.Send(context.Background(), voteRequest(2, false), func(kmsg.Response, error) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Close: %v, want ErrClosed", err)
	}
}

// A call sent with a timeout ends with a deadline error when no answer
// comes in time, leaving the connection alone; answered calls leave
// nothing behind on the connection, and a short timeout behind a long one
// still ends first.
func TestSendWithinTimesOutOnlyTheUnansweredCall(t *testing.T) {
	parked := make(chan *Request, 4)
	c := parkingClient(t, parked)
	type outcome struct {
		resp kmsg.Response
		err  error
		at   time.Duration
	}
	send := func(epoch int32, timeout time.Duration) chan outcome {
		out := make(chan outcome, 1)
		start := time.Now()
		if err := c.SendWithin(timeout, voteRequest(epoch, true), func(resp kmsg.Response, err error) {
			out <- outcome{resp, err, time.Since(start)}
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	o := <-send(1, 100*time.Millisecond)
	if !errors.Is(o.err, context.DeadlineExceeded) || o.at < 100*time.Millisecond {
		t.Fatalf("the unanswered call ended after %v with %v, want a deadline error after 100ms", o.at, o.err)
	}
	echo(<-parked) // the late answer is discarded; the connection carries on
	for i := range 200 {
		o := <-send(int32(10+i), time.Minute)
		if o.err != nil {
			t.Fatalf("call %d: %v", i, o.err)
		}
		checkVote(t, o.resp, int32(10+i), true)
	}
	c.mu.Lock()
	cc := c.conn
	c.mu.Unlock()
	cc.mu.Lock()
	left := len(cc.expiring)
	cc.mu.Unlock()
	if left != 0 {
		t.Errorf("%d answered calls are still filed for expiry", left)
	}
	long, short := send(1, time.Minute), send(1, 50*time.Millisecond)
	if o := <-short; !errors.Is(o.err, context.DeadlineExceeded) || o.at > 30*time.Second {
		t.Fatalf("the short call ended after %v with %v", o.at, o.err)
	}
	c.Close()
	if o := <-long; !errors.Is(o.err, ErrClosed) {
		t.Errorf("the long call on a closed client: %v", o.err)
	}
}
