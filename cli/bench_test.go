package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// TestBenchQuorumSmallMatrix runs `bench quorum` on a tiny matrix and
// checks the JSON report: the floors and one commit case per flush policy.
func TestBenchQuorumSmallMatrix(t *testing.T) {
	h := newHarness(t)
	code, out, errOut := h.run("bench", "quorum", "--json", "--sizes", "64", "--writers", "2", "--rate", "0", "--rate-fsync", "0",
		"--warmup", "0s", "--duration", "100ms", "--floor-duration", "20ms", "--dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var rep benchkit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not the JSON report: %v\n%s", err, out)
	}
	if rep.Floors.RTT.Count == 0 || rep.Floors.Fsync.Count == 0 || len(rep.Results) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if r.System != "kraftlab" || r.Records == 0 || r.Error != "" {
			t.Errorf("result %+v", r)
		}
	}
}

func TestBenchFailoverFastProfile(t *testing.T) {
	h := newHarness(t)
	code, out, errOut := h.run("bench", "failover", "--profiles", "fast", "--changes", "resign,kill", "-k", "1", "--dir", t.TempDir())
	expectRun(t, "bench failover", code, out, errOut, 0, "resign", "kill", "fetch timeout 200ms + 2 × election timeout 100ms")
}

func TestBenchBadUsage(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{
		{"bench", "failover", "--profiles", "slow"},
		{"bench", "failover", "--changes", "explode"},
		{"bench", "failover", "--set", "controller.quorum.fetch.timeout.ms=0"},
		{"bench", "quorum", "--flush", "sometimes"},
		{"bench", "metadata", "--parts", "everything"},
		{"bench", "metadata", "--quick", "--brokers", "0"},
		{"bench", "metadata", "--quick", "--profile", "slow"},
		{"bench", "quorum", "--systems", "hashicorp"},
	} {
		code, out, errOut := h.run(args...)
		expectRun(t, "kraftlab "+args[1]+" "+args[2], code, out, errOut, ExitUsage)
	}
	code, out, errOut := h.run("bench", "quorum", "--systems", "etcd")
	expectRun(t, "bench quorum --systems etcd", code, out, errOut, ExitUsage, "cd bench && go run . quorum")
}

// `bench metadata --quick` prints every part's table, and every timed row
// holds measured, positive durations.
func TestBenchMetadataQuickTable(t *testing.T) {
	h := newHarness(t)
	code, out, errOut := h.run("bench", "metadata", "--quick", "--dir", t.TempDir())
	expectRun(t, "bench metadata --quick", code, out, errOut, 0)
	rows := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		for _, row := range []string{"0", "200", "2000", "fast"} {
			if len(fields) == 0 || fields[0] != row {
				continue
			}
			rows[row] = true
			durations := 0
			for _, f := range fields[1:] {
				d, err := time.ParseDuration(f)
				if err != nil {
					continue
				}
				durations++
				if d <= 0 {
					t.Errorf("row %q: duration %s is not positive", line, f)
				}
			}
			if durations < 3 {
				t.Errorf("row %q holds %d durations", line, durations)
			}
		}
	}
	if len(rows) != 4 {
		t.Errorf("rows found %v\n%s", rows, out)
	}
	for _, want := range []string{"B/partition", "elected → CreateTopics", "aim at 200 partitions: commit → all 3 brokers p99 under 50.0ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
