package wire

import (
	"context"
	"testing"
	"time"
)

// openConns returns the server's open connections and those on probation.
func openConns(s *Server) (open, probation int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns), s.onProbation
}

// A member gets a connection when strangers hold every slot: the least
// recently used stranger's connection is closed to make room, as Kafka does
// for its inter-broker listener.
func TestMemberGetsASlotOverMaxConnections(t *testing.T) {
	s, logs := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), maxConns: 2})
	dq := describeQuorum()
	older, newer := dialRaw(t, s.Addr()), dialRaw(t, s.Addr())
	older.recv(t, dq, 1, older.send(t, dq))
	newer.recv(t, dq, 1, newer.send(t, dq))
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism(testSecret)})
	checkVote(t, do(t, c, voteRequest(2, false)), 2, false)
	older.expectClosed(t)
	wantLog(t, logs, "to make room for a member")
	newer.recv(t, dq, 1, newer.send(t, dq))
	if open, probation := openConns(s); open != 2 || probation != 0 {
		t.Errorf("%d connections open, %d on probation; want the member's and the newer stranger's", open, probation)
	}
}

// Members do not count toward max.connections.per.ip: every node of a
// playground connects from 127.0.0.1.
func TestMembersAreExemptFromMaxConnectionsPerIP(t *testing.T) {
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), maxPerIP: 1})
	dq := describeQuorum()
	stranger := dialRaw(t, s.Addr())
	stranger.recv(t, dq, 1, stranger.send(t, dq))
	for from := int32(2); from <= 4; from++ {
		c := newClient(t, ClientConfig{From: from, To: 1, Addr: s.Addr(), SASL: MemberMechanism(testSecret)})
		checkVote(t, do(t, c, voteRequest(from, false)), from, false)
	}
	stranger.recv(t, dq, 1, stranger.send(t, dq))
}

// A connection on probation that neither logs in nor asks for a slot is
// closed at the login deadline, and a wrong secret closes it as anywhere.
func TestProbationEndsAtTheLoginDeadline(t *testing.T) {
	s, logs := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), maxConns: 1, authTimeout: 200 * time.Millisecond})
	dq := describeQuorum()
	holder := dialRaw(t, s.Addr())
	holder.recv(t, dq, 1, holder.send(t, dq))
	idle := dialRaw(t, s.Addr())
	idle.expectClosed(t)
	wantLog(t, logs, "not authenticated in time")
	bad := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism("not-the-secret-not-the-secret!!")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := bad.Do(ctx, voteRequest(1, false)); err == nil {
		t.Fatal("a wrong secret got in over max.connections")
	}
	eventually(t, "no connection left on probation", func() bool {
		open, probation := openConns(s)
		return open == 1 && probation == 0
	})
}

// At most probationMax connections are on probation: a new one closes the
// least recently used of them.
func TestProbationIsBounded(t *testing.T) {
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), maxConns: 1})
	dq := describeQuorum()
	holder := dialRaw(t, s.Addr())
	holder.recv(t, dq, 1, holder.send(t, dq))
	first := dialRaw(t, s.Addr())
	for range probationMax + 4 {
		dialRaw(t, s.Addr())
	}
	first.expectClosed(t)
	eventually(t, "probationMax connections on probation", func() bool {
		open, probation := openConns(s)
		return open == 1+probationMax && probation == probationMax
	})
	// A member still gets in.
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism(testSecret)})
	checkVote(t, do(t, c, voteRequest(3, true)), 3, true)
}
