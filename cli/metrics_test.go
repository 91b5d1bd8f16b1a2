package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// serveReal runs a real fast-profile playground on session name, as up
// would, until the test ends.
func (h *harness) serveReal(name string, controllers, brokers int) *cluster.Playground {
	h.t.Helper()
	s, err := control.NewSession(h.home, name)
	if err != nil {
		h.t.Fatal(err)
	}
	cfg, err := cluster.NewConfig(controllers, brokers, cluster.ProfileFast, nil, "")
	if err != nil {
		h.t.Fatal(err)
	}
	pg, err := engine.Open(context.Background(), cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.serveOn(s, pg)
}

// kraftlab metrics, as a user runs it against a real playground: the
// table of Kafka's names, one node by id or leader, --json keyed by
// Kafka's names, and one-line errors for bad or unknown nodes and nodes
// that do not run.
func TestBinaryMetrics(t *testing.T) {
	h := newHarness(t)
	h.serveReal("default", 3, 1)
	code, out, errOut := h.binaryRun("wait", "caught-up", "--timeout", "30s")
	expectRun(t, "wait caught-up", code, out, errOut, ExitOK)

	code, out, errOut = h.binaryRun("metrics")
	expectRun(t, "metrics", code, out, errOut, ExitOK, view.RaftMetricsGroup, "current-state", "leader", "follower", "observer",
		"commit-latency-avg", "election-latency-max", "poll-idle-ratio-avg", "number-unknown-voter-connections")

	code, out, errOut = h.binaryRun("metrics", "leader", "--json")
	var leader map[string]any
	if err := json.Unmarshal([]byte(out), &leader); err != nil || code != ExitOK {
		t.Fatalf("metrics leader --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	for _, name := range view.RaftMetricNames() {
		if _, ok := leader[name]; !ok {
			t.Errorf("metrics leader --json lacks %q: %s", name, out)
		}
	}
	if leader["current-state"] != "leader" || leader["number-of-voters"] != 3.0 || leader["number-of-observers"] != 1.0 {
		t.Errorf("metrics leader --json: %s", out)
	}

	code, out, errOut = h.binaryRun("metrics", "101", "--json")
	var observer map[string]any
	if err := json.Unmarshal([]byte(out), &observer); err != nil || code != ExitOK {
		t.Fatalf("metrics 101 --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if _, ok := observer["number-of-observers"]; ok || observer["current-state"] != "observer" || observer["current-vote"] != -1.0 {
		t.Errorf("metrics 101 --json: %s", out)
	}

	code, out, errOut = h.binaryRun("metrics", "101")
	expectRun(t, "metrics 101", code, out, errOut, ExitOK, "node 101 (broker), "+view.RaftMetricsGroup, "observer", "records a second appended from the leader's Fetch responses")

	code, out, errOut = h.binaryRun("metrics", "--json")
	var all []view.NodeMetrics
	if err := json.Unmarshal([]byte(out), &all); err != nil || code != ExitOK || len(all) != 4 {
		t.Fatalf("metrics --json: exit %d, %v, %d nodes\n%s%s", code, err, len(all), out, errOut)
	}
	for _, n := range all {
		if n.RaftMetrics == nil || n.RaftMetrics.NumberOfVoters != 3 {
			t.Errorf("metrics --json: node %d: %+v", n.ID, n.RaftMetrics)
		}
	}

	code, out, errOut = h.binaryRun("metrics", "9")
	expectRun(t, "metrics 9", code, out, errOut, ExitUsage, "kraftlab: unknown node 9 (nodes: 1, 2, 3, 101); list them with: kraftlab nodes")
	code, out, errOut = h.binaryRun("metrics", "seven")
	expectRun(t, "metrics seven", code, out, errOut, ExitUsage, `kraftlab: bad node "seven"`)
	code, out, errOut = h.binaryRun("metrics", "1", "2")
	expectRun(t, "metrics 1 2", code, out, errOut, ExitUsage, "metrics takes at most one NODE, got 2 (1 2)")

	code, out, errOut = h.binaryRun("kill", "101")
	expectRun(t, "kill 101", code, out, errOut, ExitOK)
	code, out, errOut = h.binaryRun("metrics", "101")
	expectRun(t, "metrics 101 (killed)", code, out, errOut, ExitUsage, "kraftlab: node 101 is killed: only a running node has raft-metrics; start it with: kraftlab start 101")
	code, out, errOut = h.binaryRun("metrics")
	expectRun(t, "metrics (101 killed)", code, out, errOut, ExitOK, "no metrics: a node has them only while it runs (101 killed)")

	code, out, errOut = h.binaryRun("metrics", "--help")
	expectRun(t, "metrics --help", code, out, errOut, ExitOK, view.RaftMetricsGroup, "2 samples of", "election-latency-avg", "ms from becoming prospective or candidate")
}
