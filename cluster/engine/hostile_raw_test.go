package engine_test

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// hostileConn is an attacker's connection: Kafka frames written by hand
// with kmsg's encoding, as a process on the machine could send them.
type hostileConn struct {
	net.Conn
	br   *bufio.Reader
	corr int32
}

func dialHostile(t *testing.T, addr string) *hostileConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &hostileConn{Conn: nc, br: bufio.NewReader(nc)}
}

// frame encodes req as one request frame with clientID.
func (h *hostileConn) frame(req kmsg.Request, clientID string) []byte {
	h.corr++
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, h.corr)
}

// send writes req with clientID and returns its correlation id; a write
// error is returned, not fatal: the server may have closed on purpose.
func (h *hostileConn) send(req kmsg.Request, clientID string) (int32, error) {
	f := h.frame(req, clientID)
	_, err := h.Write(f)
	return h.corr, err
}

// recv reads one response to req within d and decodes it.
func (h *hostileConn) recv(req kmsg.Request, d time.Duration) (kmsg.Response, error) {
	h.SetReadDeadline(time.Now().Add(d))
	var size [4]byte
	if _, err := io.ReadFull(h.br, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(h.br, b); err != nil {
		return nil, err
	}
	b = b[4:] // correlation id
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		b = b[1:] // no tagged fields in the header
	}
	if err := resp.ReadFrom(b); err != nil {
		return nil, err
	}
	return resp, nil
}

// closedWithin reports whether the server closes the connection within d,
// reading and discarding whatever it sends first.
func (h *hostileConn) closedWithin(d time.Duration) bool {
	h.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, h.br)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// apiVersions is a request every Kafka server answers to anyone.
func apiVersions() *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "hostile", "1"
	return req
}

// answersWithin reports whether a fresh connection to addr gets an
// ApiVersions answer within d: the server still serves new connections.
func answersWithin(t *testing.T, addr string, d time.Duration) bool {
	t.Helper()
	h := dialHostile(t, addr)
	defer h.Close()
	req := apiVersions()
	if _, err := h.send(req, "probe"); err != nil {
		return false
	}
	_, err := h.recv(req, d)
	return err == nil
}

// waitCondWithin polls the playground until the condition holds, for at
// most d.
func waitCondWithin(t *testing.T, p *cluster.Playground, text string, d time.Duration) {
	t.Helper()
	c, err := condition.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var saw string
	poll.Until(t, d, text, func() bool {
		v := p.View()
		ok, s, err := c.Eval(&v)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		saw = s
		return ok
	}, func() string { return "last saw: " + saw + "\n" + describeNodes(p) })
}

// incompressible returns n random bytes: franz-go compresses records by
// default, and a repeated byte would shrink to almost nothing.
func incompressible(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
