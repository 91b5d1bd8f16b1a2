package tui

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

// The full help (?) says how the screen's roles map onto Kafka's
// raft-metrics current-state values.
func TestFullHelpMapsRolesOntoCurrentState(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	m := newModel(t, pg, 200, 60)
	if strings.Contains(m.View(), "current-state") {
		t.Fatal("the short help already shows the role legend")
	}
	press(t, m, "?")
	v := strings.Join(strings.Fields(m.View()), " ")
	for _, want := range []string{"Kafka's raft-metrics current-state", "Observer (a broker or other non-voter) = observer",
		"Prospective = prospective, prospective-voted once it voted", "Resigned = unattached"} {
		if !strings.Contains(v, want) {
			t.Errorf("full help lacks %q:\n%s", want, m.View())
		}
	}
}

// The full help says what the brokers pane's states mean in Kafka's terms,
// and that LAG* is kraftlab's own measure: Kafka fences a broker for a
// missed session, never for lag.
func TestFullHelpLabelsLagKraftlabsOwn(t *testing.T) {
	pg, _ := openPlayground(t, 1, 1, clustertest.Options{})
	m := newModel(t, pg, 200, 60)
	press(t, m, "?")
	v := strings.Join(strings.Fields(m.View()), " ")
	for _, want := range []string{"LAG* is kraftlab's own measure", "never for lag",
		"STARTING until a heartbeat answer says the broker has applied the metadata log up to its own registration",
		"RECOVERY caught up but still fenced"} {
		if !strings.Contains(v, want) {
			t.Errorf("full help lacks %q:\n%s", want, m.View())
		}
	}
}

// On a real cluster the legend says LAG* is what a broker has not
// fetched: what it applied is not visible over the wire.
func TestFullHelpOfARealClusterSaysLagIsFetched(t *testing.T) {
	m := replay(loadRecording(t, "attached"), 200, 60)
	press(t, m, "?")
	v := strings.Join(strings.Fields(m.View()), " ")
	for _, want := range []string{"Brokers pane (a real cluster): LAG* is the committed metadata offsets the broker has not fetched yet", "never for lag"} {
		if !strings.Contains(v, want) {
			t.Errorf("full help lacks %q:\n%s", want, m.View())
		}
	}
	if strings.Contains(v, "kraftlab's own measure") {
		t.Errorf("a real cluster's help calls LAG* kraftlab's applied measure:\n%s", m.View())
	}
}
