package interop

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// The table puts kraftlab's figure over Kafka's in each ratio row, and a
// system that failed shows its error instead of numbers.
func TestWritePeerTableRatios(t *testing.T) {
	cfg := DefaultPeerConfig()
	cfg.Sizes = []int{100}
	pc := func(rps float64, e2e, cpu time.Duration) benchkit.ProduceCase {
		return benchkit.ProduceCase{RecordBytes: 100, Acks: benchkit.AcksAll, RecordsPerSec: rps, MBPerSec: rps * 100 / 1e6,
			Produce: benchkit.Latency{P50: e2e / 2}, EndToEnd: benchkit.Latency{P50: e2e, P99: 2 * e2e}, CPUPerMB: cpu}
	}
	rep := PeerReport{LoopbackMBPerSec: 1000, Systems: []PeerSystemReport{
		{System: SystemKraftlabFsync, Produce: []benchkit.ProduceCase{pc(300000, 6*time.Millisecond, 20*time.Millisecond)},
			Propagation: &PeerPropagation{Changes: 20, AllBrokers: benchkit.Spread{P50: 30 * time.Millisecond, P99: 40 * time.Millisecond}},
			Failover:    &PeerFailover{Rounds: 5, KillToCreate: benchkit.Spread{P50: 2 * time.Second}}},
		{System: SystemKafka, Produce: []benchkit.ProduceCase{pc(100000, 60*time.Millisecond, 400*time.Millisecond)},
			Propagation: &PeerPropagation{Changes: 20, AllBrokers: benchkit.Spread{P50: 90 * time.Millisecond, P99: 160 * time.Millisecond}},
			Failover:    &PeerFailover{Rounds: 5, KillToCreate: benchkit.Spread{P50: 2500 * time.Millisecond}}},
		{System: SystemKraftlab, Error: "start: no banner"},
	}}
	var b strings.Builder
	if err := WritePeerTable(&b, cfg, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var produceRatio, metaRatio string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == "kraftlab-fsync" && f[1] == "÷" {
			if metaRatio == "" && produceRatio != "" {
				metaRatio = l
			}
			if produceRatio == "" {
				produceRatio = l
			}
		}
	}
	// records/s and MB/s 3×; produce p50, end to end p50 and p99 0.10×;
	// CPU/MB 0.05×.
	if got := strings.Fields(produceRatio); strings.Join(got[3:], " ") != "3.00× 3.00× 0.10× 0.10× 0.10× 0.05×" {
		t.Errorf("produce ratios %q", produceRatio)
	}
	// Propagation p50 and p99 0.33× and 0.25×, no answer time (-), failover 0.80×.
	if got := strings.Fields(metaRatio); strings.Join(got[3:], " ") != "0.33× 0.25× - 0.80×" {
		t.Errorf("metadata ratios %q", metaRatio)
	}
	if !regexp.MustCompile(`\bkraftlab +error\b`).MatchString(out) {
		t.Errorf("no error row for the failed system:\n%s", out)
	}
	if !strings.Contains(out, "errors:\n  kraftlab: start: no banner") {
		t.Errorf("no error line:\n%s", out)
	}
}
