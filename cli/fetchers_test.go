package cli

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/control"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with go test ./cli -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

// serveModelBrokers runs a model playground of 3 controllers and brokers
// brokers on the default session until the test ends.
func (h *harness) serveModelBrokers(brokers int) *cluster.Playground {
	h.t.Helper()
	s, err := control.NewSession(h.home, "default")
	if err != nil {
		h.t.Fatal(err)
	}
	cfg, err := cluster.NewConfig(3, brokers, cluster.ProfileFast, nil, "")
	if err != nil {
		h.t.Fatal(err)
	}
	pg, err := cluster.OpenWith(context.Background(), cfg, clustertest.Start(clustertest.Options{}))
	if err != nil {
		h.t.Fatal(err)
	}
	return h.serveOn(s, pg)
}

// Followers' threads, one per leader they follow, named as Kafka names
// them; the leader of everything it hosts has none; a killed broker is
// not running; topics describe shows the high watermark and each
// replica's log end, - for the killed broker's.
func TestFetchersAndDescribeGoldens(t *testing.T) {
	h := newHarness(t)
	h.serveModelBrokers(3)
	code, out, errOut := h.run("topics", "create", "orders", "--partitions", "3", "--replication-factor", "2")
	expectRun(t, "topics create", code, out, errOut, ExitOK)

	code, out, errOut = h.run("fetchers")
	expectRun(t, "fetchers", code, out, errOut, ExitOK)
	golden(t, "fetchers.golden", out)
	code, out, errOut = h.run("topics", "describe")
	expectRun(t, "topics describe", code, out, errOut, ExitOK)
	golden(t, "topics-describe.golden", out)

	code, out, errOut = h.run("kill", "102")
	expectRun(t, "kill 102", code, out, errOut, ExitOK)
	code, out, errOut = h.run("fetchers")
	expectRun(t, "fetchers after kill", code, out, errOut, ExitOK)
	golden(t, "fetchers-killed.golden", out)
	code, out, errOut = h.run("topics", "describe", "orders")
	expectRun(t, "topics describe after kill", code, out, errOut, ExitOK)
	golden(t, "topics-describe-killed.golden", out)

	code, out, errOut = h.run("fetchers", "101", "--json")
	expectRun(t, "fetchers 101 --json", code, out, errOut, ExitOK)
	var rows []fetcherRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].ID != 101 || len(rows[0].Fetchers) != 1 ||
		rows[0].Fetchers[0].Name != "ReplicaFetcherThread-0-103" || len(rows[0].Fetchers[0].Partitions) != 1 || rows[0].Fetchers[0].Partitions[0].Partition != 2 {
		t.Fatalf("fetchers 101 --json: %v\n%s", err, out)
	}
}

func TestFetchersRefusesWhatIsNoBroker(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fetchers", "leader"}, `bad broker "leader": want a broker's node ID, e.g. 102, target, leader-of:TOPIC-P, follower-of:TOPIC-P or coordinator-of:GROUP`},
		{[]string{"fetchers", "101", "102"}, "fetchers takes no BROKER or one, got 2 (101 102)"},
		{[]string{"fetchers", "1"}, "no broker 1; the brokers are: 101"},
	} {
		code, out, errOut := h.run(tc.args...)
		expectRun(t, tc.args[0]+" "+tc.args[1], code, out, errOut, ExitUsage, tc.want)
	}
	code, out, errOut := h.run("fetchers")
	expectRun(t, "fetchers without topics", code, out, errOut, ExitOK, "broker 101: no fetcher threads: it follows no partition; purgatories: 0 delayed produces, 0 delayed fetches\n")
}
