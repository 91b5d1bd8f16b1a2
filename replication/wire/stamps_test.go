package wire

import (
	"sync"
	"testing"
)

// With a Stamper set, an exchange is stamped at its four points, in
// order, under one connection and correlation id, with the node at each
// end; without one, nothing is.
func TestStampsTimeAnExchangeAtBothEnds(t *testing.T) {
	counters := NewCounters()
	s, _ := startServer(t, serverOpts{nodeID: 2, counters: counters})
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: s.Addr(), Counters: counters})
	checkVote(t, do(t, c, voteRequest(1, true)), 1, true) // the connection, unstamped

	var mu sync.Mutex
	var got []Stamp
	counters.SetStamper(func(s Stamp) { mu.Lock(); got = append(got, s); mu.Unlock() })
	checkVote(t, do(t, c, voteRequest(2, true)), 2, true)
	counters.SetStamper(nil)
	checkVote(t, do(t, c, voteRequest(3, true)), 3, true)

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 4 {
		t.Fatalf("%d stamps, want 4: %+v", len(got), got)
	}
	byKind := map[StampKind]Stamp{}
	for _, s := range got {
		byKind[s.Kind] = s
	}
	want := []struct {
		kind StampKind
		node int32
	}{{ClientSent, 1}, {ServerRead, 2}, {ServerSent, 2}, {ClientRead, 1}}
	for i, w := range want {
		s, ok := byKind[w.kind]
		if !ok || s.Node != w.node || s.Conn != got[0].Conn || s.Corr != got[0].Corr || s.Conn == 0 || s.Bytes <= 8 {
			t.Errorf("stamp %d: %+v, want kind %d at node %d on the first stamp's connection and correlation id", i, s, w.kind, w.node)
		}
		if i > 0 && s.At.Before(byKind[want[i-1].kind].At) {
			t.Errorf("stamp %d (%+v) before the one it follows", i, s)
		}
	}
}
