package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// A broker killed and started again at once is refused registration while
// its previous incarnation's session lives, and the event log says so,
// and why it hosts nothing meanwhile; then it registers and runs.
func TestRestartedBrokerIsToldWhyItWaits(t *testing.T) {
	p := openReal(t, 1, 1, "")
	waitCond(t, p, "broker 101 state RUNNING")
	act(t, p, "kill 101")
	act(t, p, "start 101")
	var refused cluster.Event
	poll.Until(t, 30*time.Second, "a registration-refused event", func() bool {
		for _, e := range p.EventStream().Since(0) {
			if e.Node == 101 && e.Kind == cluster.EventBrokerState && strings.Contains(e.Message, "registration refused") {
				refused = e
				return true
			}
		}
		return false
	}, func() string { return describeNodes(p) })
	if !strings.Contains(refused.Message, "previous incarnation's session is still alive") || !strings.Contains(refused.Message, "hosts no partition") {
		t.Errorf("refusal event: %q", refused.Message)
	}
	waitCond(t, p, "broker 101 state RUNNING")
	n := 0
	for _, e := range p.EventStream().Since(0) {
		if e.Node == 101 && strings.Contains(e.Message, "registration refused") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d refusal events, want one per incarnation", n)
	}
}
