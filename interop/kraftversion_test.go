package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// MainFeatures is kafka-features.
const MainFeatures = "org.apache.kafka.tools.FeatureCommand"

// upgradeOutcome is what kafka-features and kafka-metadata-quorum print
// around a kraft.version upgrade of a static quorum.
type upgradeOutcome struct {
	// before and after are describe --status's CurrentVoters.
	before, after []statusVoter
	// again is the upgrade repeated through a broker, downgrade a
	// downgrade to 0 through it.
	again, downgrade string
	// described are kafka-features describe's kraft.version lines, without
	// their epochs: before and after through a controller, then after
	// through a broker.
	described [3]string
}

// describeKRaftVersion is kafka-features describe's kraft.version line
// through boot (a controller with --bootstrap-controller), without the
// epoch, which differs between clusters.
func describeKRaftVersion(t *testing.T, k *Kafka, flag, boot string) string {
	t.Helper()
	r := runTool(t, k, MainFeatures, flag, boot, "describe")
	for _, line := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(line, "Feature: kraft.version\t") {
			line, _, _ = strings.Cut(line, "\tEpoch:")
			return line
		}
	}
	return fmt.Sprintf("(no kraft.version: %v)", r.Err)
}

// statusVoter is one of CurrentVoters in describe --status.
type statusVoter struct {
	ID          int      `json:"id"`
	DirectoryID string   `json:"directoryId"`
	Endpoints   []string `json:"endpoints"`
}

// upgradeKRaftVersion runs kafka-features upgrade --feature
// kraft.version=1 against the controllers until it succeeds (the leader
// refuses while a voter has not described itself to it yet), and the
// describes and repeats around it.
func upgradeKRaftVersion(t *testing.T, k *Kafka, side, controllers, broker string) upgradeOutcome {
	t.Helper()
	voters := func() []statusVoter {
		t.Helper()
		r := runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", controllers, "describe", "--status")
		_, vals := ParseStatus(r.Stdout)
		var out []statusVoter
		if err := json.Unmarshal([]byte(vals["CurrentVoters"]), &out); r.Err != nil || err != nil {
			t.Fatalf("%s: describe --status (%v, %v):\n%s", side, r.Err, err, r.Stdout)
		}
		slices.SortFunc(out, func(a, b statusVoter) int { return a.ID - b.ID })
		return out
	}
	var o upgradeOutcome
	o.before = voters()
	o.described[0] = describeKRaftVersion(t, k, "--bootstrap-controller", controllers)
	deadline := time.Now().Add(time.Minute)
	for {
		r := runTool(t, k, MainFeatures, "--bootstrap-controller", controllers, "upgrade", "--feature", "kraft.version=1")
		if r.Err == nil && strings.Contains(r.Stdout, "kraft.version was upgraded to 1.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: kafka-features upgrade --feature kraft.version=1: %v\n%s%s", side, r.Err, r.Stdout, r.Stderr)
		}
	}
	// The upgrade is answered once committed; a voter may show its new
	// entry a fetch later.
	for o.after = voters(); time.Now().Before(deadline) && slices.ContainsFunc(o.after, func(v statusVoter) bool { return v.DirectoryID == "" }); {
		o.after = voters()
	}
	o.described[1] = describeKRaftVersion(t, k, "--bootstrap-controller", controllers)
	o.described[2] = describeKRaftVersion(t, k, "--bootstrap-server", broker)
	r := runTool(t, k, MainFeatures, "--bootstrap-server", broker, "upgrade", "--feature", "kraft.version=1")
	o.again = strings.TrimSpace(r.Stdout)
	r = runTool(t, k, MainFeatures, "--bootstrap-server", broker, "downgrade", "--feature", "kraft.version=0")
	o.downgrade = strings.TrimSpace(r.Stdout)
	return o
}

// checkUpgraded checks the voters before and after: no directory ids
// before, every voter's after, on the listener it had.
func checkUpgraded(t *testing.T, side string, o upgradeOutcome, dirs map[int]string) {
	t.Helper()
	if len(o.before) == 0 || len(o.after) != len(o.before) {
		t.Fatalf("%s: voters before %+v, after %+v", side, o.before, o.after)
	}
	for i, v := range o.before {
		a := o.after[i]
		switch {
		case v.DirectoryID != "":
			t.Errorf("%s: static voter %d has directory id %s", side, v.ID, v.DirectoryID)
		case a.ID != v.ID || !slices.Equal(a.Endpoints, v.Endpoints):
			t.Errorf("%s: voter %+v became %+v", side, v, a)
		case a.DirectoryID == "" || dirs != nil && a.DirectoryID != dirs[a.ID]:
			t.Errorf("%s: upgraded voter %d has directory id %q, want %q", side, a.ID, a.DirectoryID, dirs[a.ID])
		}
	}
}

// Kafka's own kafka-features upgrades a static kraftlab quorum
// (kraft.version 0) to kraft.version 1: afterwards kafka-metadata-quorum
// lists the voters with their folders' directory ids, and the playground
// adds and removes a controller as a dynamic quorum does, also after a
// restart.
func TestFeaturesUpgradeKRaftVersion(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "3", "--brokers", "1", "--profile", "fast", "--set", "kraft.version=0")
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := p.Run(ctx, args...)
		if err != nil {
			t.Fatalf("kraftlab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("wait", "leader")
	if out, err := p.Run(ctx, "controllers", "add"); err == nil {
		t.Fatalf("a static quorum added a controller:\n%s", out)
	}
	o := upgradeKRaftVersion(t, k, "kraftlab", controllerBoot(p.Controllers), p.Brokers[0])
	dirs := map[int]string{}
	for id := range p.Controllers {
		dirs[int(id)] = directoryID(t, p.DataDir, int(id))
	}
	checkUpgraded(t, "kraftlab", o, dirs)
	if out, err := p.Run(ctx, "controllers", "upgrade"); err == nil || !strings.Contains(err.Error()+out, "dynamic already") {
		t.Errorf("controllers upgrade after kafka-features: %v\n%s", err, out)
	}
	run("controllers", "add")
	run("wait", "voters", "==", "4")
	// A static controller restarted after the upgrade follows its log:
	// dynamic, so the new controller can go again.
	run("kill", "1")
	run("start", "1")
	run("wait", "caught-up", "--timeout", "30s")
	run("wait", "voter", "1")
	run("controllers", "remove", "4")
	run("wait", "voters", "==", "3")
}

// The same upgrade of a static Kafka 4.4 cluster: the same voters before
// and after, and the same answers to the repeated upgrade and to a
// downgrade.
func TestFeaturesUpgradeKRaftVersionAgreesWithKafka(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "3", "--brokers", "1", "--profile", "fast", "--set", "kraft.version=0")
	if out, err := p.Run(context.Background(), "wait", "leader"); err != nil {
		t.Fatalf("wait leader: %v\n%s", err, out)
	}
	lab := upgradeKRaftVersion(t, k, "kraftlab", controllerBoot(p.Controllers), p.Brokers[0])
	checkUpgraded(t, "kraftlab", lab, nil)

	kc, err := StartKafkaCluster(context.Background(), k, t.TempDir(), KafkaClusterShape{Controllers: 3, Brokers: 1, Extra: sameTimings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	boot := controllerBoot(kc.ControllerAddrs())
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, ok := describeIDs(t, k, boot); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Kafka's quorum has no leader")
		}
	}
	kaf := upgradeKRaftVersion(t, k, "kafka", boot, kc.BrokerAddrs()[0])
	checkUpgraded(t, "kafka", kaf, nil)
	if lab.described != kaf.described {
		t.Errorf("kafka-features describe: kraftlab\n  %q\nKafka\n  %q", lab.described, kaf.described)
	}
	if lab.again != kaf.again || lab.downgrade != kaf.downgrade {
		t.Errorf("kraftlab answered\n  %q\n  %q\nKafka\n  %q\n  %q", lab.again, lab.downgrade, kaf.again, kaf.downgrade)
	}
}

// controllerBoot is --bootstrap-controller for every controller.
func controllerBoot(controllers map[int32]string) string {
	var out []string
	for _, l := range controllers {
		out = append(out, l)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
