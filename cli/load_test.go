package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// Status lists every load that runs, the metadata load and each topic's,
// with its rate and who started it; stopping one topic's load leaves the
// others listed.
func TestStatusListsEveryLoad(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	for _, topic := range []string{"orders", "audit"} {
		code, out, errOut := h.run("topics", "create", topic, "--replication-factor", "1")
		expectRun(t, "topics create "+topic, code, out, errOut, ExitOK)
	}
	code, out, errOut := h.run("load", "50", "--topic", "orders")
	expectRun(t, "load 50 --topic orders", code, out, errOut, ExitOK, "topic load started: 50 rec/s of 100 B, produced to topic orders")
	code, out, errOut = h.run("status")
	expectRun(t, "status with a topic load", code, out, errOut, ExitOK,
		"\ntopic load 50 rec/s of 100 B to topic orders; 0 records acknowledged, 0 failed, started from the command line\n")
	if strings.Contains(out, "load off") {
		t.Errorf("status says load off while orders loads:\n%s", out)
	}

	code, out, errOut = h.run("load", "200")
	expectRun(t, "load 200", code, out, errOut, ExitOK)
	code, out, errOut = h.run("load", "10", "--topic", "audit", "--size", "64")
	expectRun(t, "load 10 --topic audit", code, out, errOut, ExitOK)
	code, out, errOut = h.run("status")
	expectRun(t, "status with three loads", code, out, errOut, ExitOK,
		"\nload 200 rec/s of 100 B on node 1; ", "records committed, started from the command line\n",
		"\ntopic load 10 rec/s of 64 B to topic audit; ",
		"\ntopic load 50 rec/s of 100 B to topic orders; ")

	code, out, _ = h.run("status", "--json")
	var v view.View
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != ExitOK {
		t.Fatalf("status --json: %d %v %s", code, err, out)
	}
	if v.Load.RecordsPerSec != 200 || v.Load.StartedBy != view.OriginCLI || len(v.TopicLoads) != 2 {
		t.Fatalf("status --json loads: %+v %+v", v.Load, v.TopicLoads)
	}
	for i, want := range []struct {
		topic string
		rate  int
	}{{"audit", 10}, {"orders", 50}} {
		if l := v.TopicLoads[i]; l.Topic != want.topic || l.RecordsPerSec != want.rate || l.StartedBy != view.OriginCLI {
			t.Errorf("status --json topic load %d: %+v, want %s at %d/s from the cli", i, l, want.topic, want.rate)
		}
	}

	code, out, errOut = h.run("load", "stop", "--topic", "orders")
	expectRun(t, "load stop --topic orders", code, out, errOut, ExitOK, "topic load of orders stopped")
	code, out, errOut = h.run("load")
	expectRun(t, "load after stopping orders", code, out, errOut, ExitOK,
		"load 200 rec/s of 100 B on node 1, started from the command line\n",
		"topic load 10 rec/s of 64 B to topic audit, started from the command line\n")
	if strings.Contains(out, "orders") {
		t.Errorf("load still lists orders after its stop:\n%s", out)
	}
	code, out, _ = h.run("load", "--json")
	var lj struct {
		view.Load
		Topics []view.TopicLoad `json:"topicLoads"`
	}
	if err := json.Unmarshal([]byte(out), &lj); err != nil || code != ExitOK || len(lj.Topics) != 1 || lj.Topics[0].Topic != "audit" {
		t.Errorf("load --json: %d %v %s", code, err, out)
	}
}
