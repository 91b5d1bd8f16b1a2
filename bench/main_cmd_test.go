package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/benchkit"
)

func TestParseQuorum(t *testing.T) {
	var stderr bytes.Buffer
	cfg, asJSON, err := parseQuorum([]string{"--json", "--sizes", "16, 4KiB", "--writers", "8", "--rate", "0", "--flush", "always", "--systems", "etcd,kraftlab"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !asJSON || len(cfg.Sizes) != 2 || cfg.Sizes[1] != 4096 || cfg.Writers[0] != 8 || len(cfg.Rates) != 0 ||
		len(cfg.Flushes) != 1 || !cfg.Flushes[0] || len(cfg.Systems) != 2 || cfg.Systems[0].Name != "etcd" {
		t.Fatalf("parsed %+v json=%v", cfg, asJSON)
	}
	for _, bad := range [][]string{
		{"--sizes", "0"},
		{"--sizes", "big"},
		{"--sizes", ""},
		{"--flush", "sometimes"},
		{"--writers", "-1"},
		{"--duration", "0s"},
		{"--systems", "nope"},
		{"extra"},
		{"--writers", "", "--rate", "0", "--rate-fsync", "0"},
	} {
		if _, _, err := parseQuorum(bad, &stderr); err == nil {
			t.Errorf("parseQuorum(%q) accepted", bad)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), nil, &out, &errb); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"quorum", "--systems", "nope"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown system") {
		t.Errorf("unknown system: exit %d, stderr %q", code, errb.String())
	}
}

// TestRunQuorumJSON runs the whole command on kraftlab and a peer with a
// tiny matrix and checks the JSON it prints.
func TestRunQuorumJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"quorum", "--json", "--systems", "kraftlab,etcd", "--flush", "never,always", "--sizes", "16",
		"--writers", "2", "--rate", "2000", "--rate-fsync", "0", "--warmup", "0s", "--duration", "100ms",
		"--floor-duration", "20ms", "--dir", t.TempDir()}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
	}
	var rep benchkit.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not the JSON report: %v\n%s", err, out.String())
	}
	if rep.Floors.RTT.Count == 0 || rep.Floors.Fsync.Count == 0 {
		t.Fatalf("floors not measured: %+v", rep.Floors)
	}
	if len(rep.Floors.OpenLoop) != 1 || rep.Floors.OpenLoop[0].Rate != 2000 || rep.Floors.OpenLoop[0].Latency.Count == 0 {
		t.Fatalf("open-loop floor: %+v", rep.Floors.OpenLoop)
	}
	if len(rep.Results) != 6 || rep.Reference != "kraftlab" {
		t.Fatalf("%d results against %q, want 2 writers for both flush policies and 2000/s for flush never, for kraftlab and etcd",
			len(rep.Results), rep.Reference)
	}
	for i, r := range rep.Results {
		if r.System != []string{"kraftlab", "etcd"}[i%2] || r.Records == 0 || r.Latency.P50 <= 0 || r.Error != "" || r.AllocsPerRecord <= 0 {
			t.Errorf("result %+v", r)
		}
		if (r.System == "etcd") != (r.VsReference != nil) {
			t.Errorf("%s: ratios %+v, want them on the peer only", r.System, r.VsReference)
		}
	}
}
