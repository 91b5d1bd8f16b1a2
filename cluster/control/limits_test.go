package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// rawConn dials the session's socket for a hand-written request.
func (s *served) rawConn(t *testing.T) net.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := s.session.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readUntilClosed reads what the server sends until it closes the
// connection, failing the test if that takes longer than within.
func readUntilClosed(t *testing.T, c net.Conn, within time.Duration) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(within))
	b, err := io.ReadAll(c)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the server kept the connection open for more than %v; it sent %q", within, b)
		}
		if !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("read: %v", err)
		}
	}
	return string(b)
}

func shortTimeouts(header, read time.Duration) func(cluster.Operator, func()) *Server {
	return func(ctl cluster.Operator, onDown func()) *Server {
		return newServer(ctl, onDown, header, read, time.Minute)
	}
}

// A client that stops sending halfway through its body is answered and cut
// off at the read timeout; one that stops inside its headers, at the header
// timeout. Neither keeps a connection (and a goroutine) forever.
func TestSlowClientsAreCutOff(t *testing.T) {
	s := serveWith(t, shortTimeouts(200*time.Millisecond, 300*time.Millisecond))

	c := s.rawConn(t)
	fmt.Fprintf(c, "POST /v1/load HTTP/1.1\r\nHost: kraftlab\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"recordsPer")
	got := readUntilClosed(t, c, 5*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 400") || !strings.Contains(got, "not received within") {
		t.Errorf("half a body: got %q, want a 400 saying the body did not arrive", got)
	}

	c = s.rawConn(t)
	fmt.Fprintf(c, "POST /v1/load HTTP/1.1\r\nHost: kra")
	readUntilClosed(t, c, 5*time.Second)

	// An event stream outlives the read timeout.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next, stop := iter.Pull2(s.client.Events(ctx, 0, true))
	defer stop()
	if _, err, ok := next(); !ok || err != nil {
		t.Fatalf("first event: %v %v", err, ok)
	}
	deadline := time.Now().Add(time.Second) // > 3 read timeouts
	for time.Now().Before(deadline) {
		if _, err := s.client.Do(ctx, cluster.Action{Kind: cluster.ActHeal}); err != nil {
			t.Fatal(err)
		}
		if _, err, ok := next(); !ok || err != nil {
			t.Fatalf("the event stream ended after the read timeout: %v %v", err, ok)
		}
	}
}

// Every numeric field is range-checked before it becomes a duration or a
// rate, bodies are one JSON object with nothing after it, and errors quote
// little of what the client sent.
func TestBodiesAreStrictAndRangeChecked(t *testing.T) {
	s := serve(t)
	cases := []struct {
		path, body string
		msg        string
	}{
		{"/v1/links/1/2/link", `{"delayMs": 9223372036854775807}`, "link: delayMs 9223372036854775807 must be between 0 and 60000"},
		{"/v1/links/1/2/link", `{"delayMs": 9223372036854775808}`, "bad request body: json: cannot unmarshal number"},
		{"/v1/links/1/2/link", `{"delayMs": 1e30}`, "bad request body: json: cannot unmarshal number"},
		{"/v1/links/1/2/link", `{"delayMs": 9223372036855}`, "must be between 0 and 60000"},
		{"/v1/links/1/2/link", `{"delayMs": -1}`, "delayMs -1 must be between 0 and 60000"},
		{"/v1/links/1/2/link", `{"jitterMs": 60001}`, "jitterMs 60001 must be between 0 and 60000"},
		{"/v1/links/1/2/link", `{"loss": -0.5}`, "loss -0.5 must be between 0 and 1"},
		{"/v1/links/1/2/link", `{"delayMs": 10} x`, "data after the JSON object"},
		{"/v1/links/1/2/partition", `{"oneway": true}{"oneway": false}`, "data after the JSON object"},
		{"/v1/links/1/2/partition", `{"oneway": true}]`, "data after the JSON object"},
		{"/v1/links/1/2/partition", `[1]`, "bad request body: json: cannot unmarshal array"},
		{"/v1/load", `{"recordsPerSec": 10} {}`, "data after the JSON object"},
		{"/v1/load", `{"recordsPerSec": -1}`, "load rate -1 records/s must be between 0 (stop) and 100000"},
		{"/v1/load", `{"recordsPerSec": 9223372036854775807}`, "load rate 9223372036854775807 records/s must be between"},
		{"/v1/load", `{"recordsPerSec": 0, "recordBytes": -4}`, "load record size -4 B must be between 16 B and 32 KiB (0: the default)"},
		{"/v1/load", `{"recordsPerSec": 1.5}`, "bad request body: json: cannot unmarshal number 1.5"},
		{"/v1/load", `{"recordsPerSec": 10, "startedBy": "mallory"}`, `startedBy "mallory": want cli, scenario or screen`},
		{"/v1/load", `{"` + strings.Repeat("r", 5000) + `": 1}`, "bad request body: json: unknown field"},
		{"/v1/load", strings.Repeat(" ", maxBody+1), "more than 65536 bytes"},
	}
	for _, tc := range cases {
		status, msg := s.raw(t, "POST", tc.path, tc.body)
		if status != http.StatusBadRequest || !strings.Contains(msg, tc.msg) || len(msg) > 400 {
			t.Errorf("POST %s %.60q = %d %q; want 400 %q (under 400 bytes)", tc.path, tc.body, status, msg, tc.msg)
		}
	}
	if _, err := s.client.Do(context.Background(), cluster.Action{Kind: cluster.ActLink, Node: condition.NodeID(1), Peer: condition.NodeID(2), DelayMs: 60000}); err != nil {
		t.Errorf("the largest delay: %v", err)
	}
	if _, err := s.client.Do(context.Background(), cluster.Action{Kind: cluster.ActLink, Node: condition.NodeID(1), Peer: condition.NodeID(2), DelayMs: 1 << 62}); !errors.Is(err, cluster.ErrBadAction) {
		t.Errorf("an overflowing delay from the client: %v, want a bad action", err)
	}
}

func TestLongInputIsNotEchoed(t *testing.T) {
	s := serve(t)
	long := strings.Repeat("a", 5000)
	for _, tc := range []struct{ method, path, msg string }{
		{"GET", "/v1/" + long, `no such endpoint: GET "/v1/aaaa`},
		{"POST", "/v1/nodes/" + long + "/kill", `bad node "aaaa`},
		{"POST", "/v1/links/1/" + long + "/link", `bad node "aaaa`},
		{"POST", "/v1/nodes/1/" + long, `no node action "aaaa`},
		{"GET", "/v1/events?after=" + long, `bad after="aaaa`},
		{"DELETE", "/v1/status" + strings.Repeat("/x", 2000), `"/v1/status/x/x`},
	} {
		status, msg := s.raw(t, tc.method, tc.path, "")
		if status < 400 || !strings.Contains(msg, tc.msg) || len(msg) > 300 {
			t.Errorf("%s %.40s… = %d %q; want an error with %q under 300 bytes", tc.method, tc.path, status, msg, tc.msg)
		}
		if tc.method == "GET" && !strings.Contains(msg, "bytes)") {
			t.Errorf("%q does not say how long the input was", msg)
		}
	}

	// A 900 KB request line is refused by size, without a word of it.
	c := s.rawConn(t)
	w := bufio.NewWriter(c)
	fmt.Fprintf(w, "GET /v1/%s HTTP/1.1\r\nHost: kraftlab\r\n\r\n", strings.Repeat("b", 900<<10))
	flushed := make(chan struct{})
	go func() { w.Flush(); close(flushed) }() // the server hangs up before the end
	got := readUntilClosed(t, c, 5*time.Second)
	c.Close()
	<-flushed
	if !strings.HasPrefix(got, "HTTP/1.1 431") || len(got) > 1000 || strings.Contains(got, "bbbb") {
		t.Errorf("900 KB URL: got %d bytes: %.200q", len(got), got)
	}
}
