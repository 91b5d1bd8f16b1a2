package benchkit

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The quick run measures every part on a real cluster and real loaders:
// every change reached every broker, after its commit and never before
// the controller's answer could have been sent; every loader loaded the
// snapshot and applied every change; every kill found a new controller
// that answered CreateTopics after its election.
func TestRunMetadataQuick(t *testing.T) {
	cfg := QuickMetadataConfig()
	cfg.Dir = t.TempDir()
	var progress bytes.Buffer
	rep, err := RunMetadata(context.Background(), cfg, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rep.Propagation) != 2 {
		t.Fatalf("propagation %+v", rep.Propagation)
	}
	for i, p := range rep.Propagation {
		if p.Partitions != cfg.PropagationPartitions[i] || p.Changes != cfg.Changes || p.Brokers != cfg.Brokers || p.Error != "" {
			t.Fatalf("propagation %+v", p)
		}
		if p.AllBrokers.P50 <= 0 || p.AllBrokers.Max < p.AllBrokers.P99 || p.EachBroker.Max > p.AllBrokers.Max || p.Answer.P50 <= 0 {
			t.Errorf("propagation spreads %+v", p)
		}
		if p.SlowestBrokerP50 < p.FastestBrokerP50 || p.SlowestBroker < 101 {
			t.Errorf("per-broker medians %+v", p)
		}
		if (p.Partitions > 0) != (p.Fill > 0) {
			t.Errorf("at %d partitions the fill took %v", p.Partitions, p.Fill)
		}
	}
	if len(rep.Scale) != 1 {
		t.Fatalf("scale %+v", rep.Scale)
	}
	s := rep.Scale[0]
	if s.Partitions != 2000 || s.Topics != 20 || s.Loaders != cfg.Brokers || s.Changes != cfg.ScaleChanges || s.Error != "" {
		t.Errorf("scale %+v", s)
	}
	if s.ImageBytes == 0 || s.BytesPerPartition <= 0 || s.SnapshotBytes < 2000*40 || s.SnapshotWrite <= 0 ||
		s.SnapshotLoad.P50 <= 0 || s.ChangeAll.P50 <= 0 || s.ChangeOne.P50 <= 0 || s.ChangeAll.Max < s.ChangeOne.P50 {
		t.Errorf("scale figures %+v", s)
	}
	if len(rep.Failover) != 1 {
		t.Fatalf("failover %+v", rep.Failover)
	}
	f := rep.Failover[0]
	if f.Rounds != 1 || f.Partitions != 300 || f.Fill <= 0 || f.Error != "" {
		t.Fatalf("failover %+v", f)
	}
	for _, smp := range f.Samples {
		if smp.NewController == smp.OldController || smp.ElectionToCreate <= 0 || smp.Activation <= 0 || smp.KillToElection <= 0 {
			t.Errorf("failover sample %+v", smp)
		}
		if smp.ElectionToActive < smp.Activation || smp.ElectionToActive > smp.ElectionToCreate {
			t.Errorf("elected → active %v is not between activation's own %v and the first answer %v", smp.ElectionToActive, smp.Activation, smp.ElectionToCreate)
		}
	}
	var buf bytes.Buffer
	if err := WriteMetadataTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"all p50", "each p50", "spread p50", "aim at 200 partitions", "B/partition", "elected → CreateTopics"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

// A config with impossible sizes is refused before anything starts.
func TestRunMetadataRefusesBadSizes(t *testing.T) {
	for _, mutate := range []func(*MetadataConfig){
		func(c *MetadataConfig) { c.Brokers = 0 },
		func(c *MetadataConfig) { c.Changes = 0 },
		func(c *MetadataConfig) { c.Partitions = []int{-1} },
		func(c *MetadataConfig) { c.FailoverRounds = 0 },
	} {
		cfg := QuickMetadataConfig()
		mutate(&cfg)
		if _, err := RunMetadata(context.Background(), cfg, &bytes.Buffer{}); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}
