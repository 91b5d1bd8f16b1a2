package tui

import "testing"

// The panel names the place on the screen that shows what a wait or
// expect line checked, with the node its result resolved.
func TestOnScreen(t *testing.T) {
	for _, c := range []struct{ cmd, out, want string }{
		{"wait hwm >= baseline+5", "ok: hwm 47 (want >= 46)", "the header's HWM and the Commit panel"},
		{"wait hwm payments-0 == 50", "", "HWM of payments-0 in the Partitions pane (b)"},
		{"wait node target lag >= 5", "ok: node 2 lag 5 (want >= 5); node 2 is Follower", "node 2's LAG in the quorum table"},
		{"expect node old-leader epoch <= baseline+1", "", "node old-leader's EPOCH in the quorum table"},
		{"wait --timeout 30s node leader role Leader", "ok: node 3 role Leader", "node 3's ROLE in the quorum table"},
		{"wait node old-leader truncations >= 1", "ok: node 1 truncations 1", "node 1's truncation in the Events"},
		{"wait new-leader", "", "the header's leader and epoch, and ROLE in the quorum table"},
		{"wait caught-up", "", "the Commit panel: every voter's bar at the log end"},
		{"wait unfenced 103", "", "FENCED in the Brokers pane (b)"},
		{"wait isr payments-0 size == 2", "", "the ISR (✗ marks a replica out of it) in the Partitions pane (b)"},
		{"wait partition-leader payments-0 != target", "", "the leader (*) in the Partitions pane (b)"},
		{"wait hwm>=5", "", "the header's HWM and the Commit panel"},
		{"isolate follower", "isolated node 2", ""},
		{"wait", "", ""},
		{"wait node 2", "", ""},
		{"wait node 2 nonsense 3", "", ""},
		{"expect --timeout", "", ""},
	} {
		if got, _ := onScreen(c.cmd, c.out); got != c.want {
			t.Errorf("onScreen(%q, %q) = %q, want %q", c.cmd, c.out, got, c.want)
		}
	}
}
