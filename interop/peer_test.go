package interop

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// The peer comparison runs end to end on both systems at a small size:
// every system measured every part without error, and the table holds a
// row and a ratio for each. Speed is not asserted; the command measures
// it.
func TestPeerComparison(t *testing.T) {
	k := needKafka(t)
	bin := needKraftlab(t)
	cfg := DefaultPeerConfig()
	cfg.Sizes, cfg.Acks = []int{100}, []benchkit.Acks{benchkit.AcksAll}
	cfg.Warmup, cfg.Duration = 300*time.Millisecond, 500*time.Millisecond
	cfg.Changes, cfg.FailoverRounds, cfg.Heap = 3, 1, "256m"
	cfg.Systems = []PeerSystem{SystemKraftlabFsync, SystemKafka}
	cfg.Dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress strings.Builder
	rep, err := RunPeers(ctx, k, bin, cfg, &progress)
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := WritePeerTable(&table, cfg, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("table:\n%s", table.String())
	if len(rep.Systems) != 2 {
		t.Fatalf("%d systems reported, want 2", len(rep.Systems))
	}
	for _, s := range rep.Systems {
		if s.Error != "" {
			t.Errorf("%s: %s", s.System, s.Error)
		}
		if len(s.Produce) != 1 {
			t.Fatalf("%s: %d produce cases, want 1", s.System, len(s.Produce))
		}
		c := s.Produce[0]
		if c.Records <= 0 || c.EndToEnd.Count < c.Records || c.CPUPerMB <= 0 {
			t.Errorf("%s: produce case %+v: want records, every one read back, and CPU", s.System, c)
		}
		if s.Propagation == nil || s.Propagation.Changes != cfg.Changes || s.Propagation.AllBrokers.P50 <= 0 || s.Propagation.AllBrokers.P50 < s.Propagation.PollRoundTrip.Min {
			t.Errorf("%s: propagation %+v", s.System, s.Propagation)
		}
		if s.Failover == nil || s.Failover.Rounds != cfg.FailoverRounds || s.Failover.KillToCreate.P50 <= 0 {
			t.Errorf("%s: failover %+v", s.System, s.Failover)
		}
		for _, f := range s.failoverSamples() {
			if f.New == f.Old {
				t.Errorf("%s: the killed controller %d answered CreateTopics", s.System, f.Old)
			}
		}
	}
	out := table.String()
	for _, want := range []string{"kraftlab-fsync ÷ kafka", "records/s", "end to end p50", "kill -> CreateTopics p50"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if strings.Contains(out, "errors:") || regexp.MustCompile(`\berror\b`).MatchString(out) {
		t.Error("table reports errors")
	}
}

func (s PeerSystemReport) failoverSamples() []PeerFailoverRound {
	if s.Failover == nil {
		return nil
	}
	return s.Failover.Samples
}

func TestPeerConfigValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(*PeerConfig)
		want string
	}{
		{func(c *PeerConfig) { c.Controllers = 1 }, "failover needs 3 or more controllers"},
		{func(c *PeerConfig) { c.Systems = []PeerSystem{"redpanda"} }, `system "redpanda"`},
		{func(c *PeerConfig) { c.Sizes = []int{2} }, "size: 2 B"},
		{func(c *PeerConfig) { c.Heap = "" }, "no Kafka heap size"},
	} {
		cfg := DefaultPeerConfig()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
	}
	if err := DefaultPeerConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePeerPart("latency"); err == nil {
		t.Error("part latency accepted")
	}
}
