package cli

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/scenario"
)

// A file fits a running playground with its controllers, its --set values
// and --profile, and its brokers, or any brokers when it asks for none;
// one that does not fit runs nothing and says how to start one it fits.
func TestScenarioFitsARunningPlayground(t *testing.T) {
	h := newHarness(t)
	h.serve("demo", clustertest.Options{}) // 3 controllers, broker 101, profile fast
	dir := t.TempDir()
	file := func(name, text string) string { return writeFile(t, dir, name, text) }

	quorum := file("quorum.txt", "up --controllers 3 --brokers 0\nwait leader\nkill follower\nstart target\nwait caught-up\n")
	code, out, errOut := h.binaryRunIn("", "scenario", "run", "--session", "demo", quorum)
	expectRun(t, "a file of no brokers on a playground with one", code, out, errOut, ExitOK,
		"running already: it keeps running after the file; the file asks for no brokers, so its brokers only watch)",
		"--- PASS "+quorum)

	// Its node IDs are its own shape's, whatever the playground has.
	names101 := file("names101.txt", "up --controllers 3 --brokers 0\nkill 101\n")
	code, out, errOut = h.binaryRun("scenario", "check", "--session", "demo", names101)
	expectRun(t, "a file of no brokers naming one", code, out, errOut, ExitUsage,
		names101+":2: unknown node 101: the up line ("+names101+":1) makes controllers 1..3 and no brokers")

	same := file("same.txt", "up --controllers 3 --brokers 1 --set replica.lag.time.max.ms=1500 --profile fast\nwait leader\n")
	noUp := file("noup.txt", "wait leader\n")
	pull := file("pull.txt", "up --controllers 3 --brokers 1 --quorum pull\nwait leader\n")
	code, out, errOut = h.binaryRun("scenario", "check", "--session", "demo", same, noUp, pull)
	expectRun(t, "files that fit", code, out, errOut, ExitOK, "3 scenario files are valid")

	for _, tc := range []struct{ up, asks, runs, line string }{
		{"up --controllers 3 --brokers 2", "3 controllers and 2 brokers", "3 controllers and 1 broker",
			"kraftlab up --headless --session demo --controllers 3 --brokers 2 &"},
		{"up --controllers 1", "1 controller and 3 brokers", "3 controllers and 1 broker",
			"kraftlab up --headless --session demo --controllers 1 --brokers 3 &"},
		{"up --controllers 3 --brokers 1 --set replica.lag.time.max.ms=2500", "replica.lag.time.max.ms=2500", "replica.lag.time.max.ms=1500",
			"kraftlab up --headless --session demo --controllers 3 --brokers 1 --set replica.lag.time.max.ms=2500 &"},
		{"up --controllers 3 --brokers 1 --quorum push", "kraftlab.quorum.replication=push", "kraftlab.quorum.replication=pull",
			"kraftlab up --headless --session demo --controllers 3 --brokers 1 --quorum push &"},
		{"up --controllers 3 --brokers 1 --profile kafka", "profile kafka", "profile fast",
			"kraftlab up --headless --session demo --controllers 3 --brokers 1 --profile kafka &"},
	} {
		f := file("misfit.txt", tc.up+"\nwait leader\n")
		code, out, errOut = h.binaryRun("scenario", "run", "--session", "demo", f)
		expectRun(t, tc.up, code, out, errOut, ExitUsage,
			f+":1: the file asks for "+tc.asks+", but playground \"demo\" runs "+tc.runs+";",
			"To start one that fits:\n    kraftlab down --session demo\n    "+tc.line+"\n",
			"nothing ran")
		if strings.Contains(out, "===") {
			t.Errorf("%s: something ran:\n%s", tc.up, out)
		}
	}
}

// A run's --set of the replication goes over the up line's --quorum, as
// it goes over the line's own --set; the line's --quorum holds otherwise.
func TestScenarioRunSetOverUpLineQuorum(t *testing.T) {
	h := newHarness(t)
	e := h.env(&lockedBuffer{}, &lockedBuffer{})
	s, err := scenario.Parse("push.txt", strings.NewReader("up --controllers 3 --brokers 0 --quorum push\nwait leader\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{nil, "push"},
		{[]string{"kraftlab.quorum.replication=pull"}, "pull"},
		{[]string{"controller.quorum.fetch.timeout.ms=1000"}, "push"},
	} {
		cfg, err := scenarioConfig(e, s, "", tc.sets)
		if err != nil {
			t.Fatalf("%v: %v", tc.sets, err)
		}
		if got, _ := cfg.Settings.Get("kraftlab.quorum.replication"); got != tc.want {
			t.Errorf("--set %v over up --quorum push: %s, want %s", tc.sets, got, tc.want)
		}
	}
}
