package interop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// requestFrame is a request header (Fetch v4: api key, version,
// correlation id, client id) and a body, as a Kafka client frames it.
func requestFrame(clientID string, body []byte) []byte {
	f := binary.BigEndian.AppendUint16(nil, 1)
	f = binary.BigEndian.AppendUint16(f, 4)
	f = binary.BigEndian.AppendUint32(f, 7)
	f = binary.BigEndian.AppendUint16(f, uint16(len(clientID)))
	return append(append(f, clientID...), body...)
}

// echoServer answers every frame with the same frame.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					f, err := readFrame(c)
					if err != nil || writeFrame(c, f) != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// peer is a connection through the proxy from the node whose raft client
// is named by its client id.
type peer struct {
	c  net.Conn
	id string
}

func dialPeer(t *testing.T, addr, clientID string) *peer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &peer{c: c, id: clientID}
}

// roundTrip sends one request and reports whether its echo came back.
func (p *peer) roundTrip() error {
	p.c.SetDeadline(time.Now().Add(5 * time.Second))
	want := requestFrame(p.id, []byte("body"))
	if err := writeFrame(p.c, want); err != nil {
		return err
	}
	got, err := readFrame(p.c)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("echo differs")
	}
	return nil
}

func TestNodeProxyCutsAnIsolatedNodesLinksAndHeals(t *testing.T) {
	var rules LinkRules
	p, err := NewNodeProxy(1, echoServer(t), &rules)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	from2, from3, tool := dialPeer(t, p.Addr, "raft-client-2"), dialPeer(t, p.Addr, "raft-client-3"), dialPeer(t, p.Addr, "adminclient-1")
	for _, c := range []*peer{from2, from3, tool} {
		if err := c.roundTrip(); err != nil {
			t.Fatalf("%s before any cut: %v", c.id, err)
		}
	}

	// Isolating node 2 ends its connection to node 1 and refuses its next
	// one, while node 3's and the unnamed client's carry on.
	rules.SetIsolated(2, true)
	p.Enforce()
	if err := from2.roundTrip(); err == nil {
		t.Error("node 2's connection still carries requests after node 2 was isolated")
	}
	if err := dialPeer(t, p.Addr, "raft-client-2").roundTrip(); err == nil {
		t.Error("a new connection from node 2 carries requests while node 2 is isolated")
	}
	for _, c := range []*peer{from3, tool} {
		if err := c.roundTrip(); err != nil {
			t.Errorf("%s while node 2 is isolated: %v", c.id, err)
		}
	}

	// Isolating node 1 itself cuts every connection to it.
	rules.SetIsolated(1, true)
	p.Enforce()
	for _, c := range []*peer{from3, tool} {
		if err := c.roundTrip(); err == nil {
			t.Errorf("%s still reaches node 1 after node 1 was isolated", c.id)
		}
	}

	rules.HealAll()
	if err := dialPeer(t, p.Addr, "raft-client-2").roundTrip(); err != nil {
		t.Errorf("node 2 after heal: %v", err)
	}

	// Paused, the port refuses connections as a dead node's would.
	p.Pause()
	if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
		c.Close()
		t.Error("a paused proxy accepted a connection")
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := dialPeer(t, p.Addr, "raft-client-3").roundTrip(); err != nil {
		t.Errorf("node 3 after resume: %v", err)
	}
}

func TestSenderReadsTheRaftClientID(t *testing.T) {
	for _, c := range []struct {
		frame []byte
		want  int32
	}{
		{requestFrame("raft-client-3", nil), 3},
		{requestFrame("raft-client-101", []byte{1, 2}), 101},
		{requestFrame("adminclient-1", nil), -1},
		{requestFrame("raft-client-x", nil), -1},
		{requestFrame("raft-client--5", nil), -1},
		{requestFrame("raft-client-99999999999", nil), -1},
		{requestFrame("raft-client-3", nil)[:12], -1},    // cut inside the client id
		{[]byte{0, 1, 0, 4, 0, 0, 0, 7, 0xff, 0xff}, -1}, // null client id
		{nil, -1},
	} {
		if got := sender(c.frame); got != c.want {
			t.Errorf("sender(%q) = %d, want %d", c.frame, got, c.want)
		}
	}
}

// FuzzSender: whatever bytes a peer sends first, sender answers -1 or the
// id a raft-client-<id> client id inside them names, and never panics.
func FuzzSender(f *testing.F) {
	f.Add(requestFrame("raft-client-3", nil))
	f.Add(requestFrame("adminclient-1", []byte("x")))
	f.Add([]byte{0, 1, 0, 4, 0, 0, 0, 7, 0x7f, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		id := sender(frame)
		if id == -1 {
			return
		}
		if id < 0 || !bytes.Contains(frame, []byte("raft-client-")) {
			t.Fatalf("sender(%q) = %d, not named in the frame", frame, id)
		}
	})
}
