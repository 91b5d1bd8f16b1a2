package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// MainFeatures is kafka-features.
const MainFeatures = "org.apache.kafka.tools.FeatureCommand"

// Kafka's own kafka-features upgrades a static kraftlab quorum
// (kraft.version 0) to kraft.version 1, once through a controller and
// once, as a no-op, through a broker: afterwards kafka-metadata-quorum
// lists the voters with their directory ids and listeners, as a dynamic
// quorum's.
func TestFeaturesUpgradeKRaftVersion(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "3", "--brokers", "1", "--profile", "fast", "--set", "kraft.version=0")
	ctx := context.Background()
	if out, err := p.Run(ctx, "wait", "leader"); err != nil {
		t.Fatalf("wait leader: %v\n%s", err, out)
	}
	var ids []int32
	var boots []string
	for id, l := range p.Controllers {
		ids = append(ids, id)
		boots = append(boots, l)
	}
	slices.Sort(ids)
	boot := strings.Join(boots, ",")
	r := runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", boot, "describe", "--status")
	if _, vals := ParseStatus(r.Stdout); r.Err != nil || vals["CurrentVoters"] == "" || strings.Contains(vals["CurrentVoters"], "directoryId") {
		t.Fatalf("a static quorum's voters have no directory ids (%v):\n%s", r.Err, r.Stdout)
	}
	// The voters describe themselves to a new leader a fetch timeout
	// after it is elected; until then the leader refuses the upgrade.
	deadline := time.Now().Add(time.Minute)
	for {
		r = runTool(t, k, MainFeatures, "--bootstrap-controller", boot, "upgrade", "--feature", "kraft.version=1")
		if r.Err == nil && strings.Contains(r.Stdout, "kraft.version was upgraded to 1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kafka-features upgrade --feature kraft.version=1: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
		}
	}
	if _, err := p.Run(ctx, "wait", "caught-up", "--timeout", "20s"); err != nil {
		t.Fatal(err)
	}
	r = runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", boot, "describe", "--status")
	if r.Err != nil {
		t.Fatalf("describe --status: %v", r.Err)
	}
	for _, id := range ids {
		want := fmt.Sprintf(`{"id": %d, "directoryId": "%s", "endpoints": ["CONTROLLER://%s"]}`, id, directoryID(t, p.DataDir, int(id)), p.Controllers[id])
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("describe --status does not list %s:\n%s", want, r.Stdout)
		}
	}
	// Through a broker, which forwards it: the same version again is
	// nothing to do.
	if len(p.Brokers) > 0 {
		r = runTool(t, k, MainFeatures, "--bootstrap-server", p.Brokers[0], "upgrade", "--feature", "kraft.version=1")
		if r.Err != nil {
			t.Errorf("upgrade again through a broker: %v\n%s", r.Err, r.Stderr)
		}
		r = runTool(t, k, MainFeatures, "--bootstrap-server", p.Brokers[0], "downgrade", "--feature", "kraft.version=0")
		if r.Err == nil {
			t.Errorf("downgrade to kraft.version 0 succeeded:\n%s", r.Stdout)
		}
	}
}
