package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// controllerListener is the listener (host:port) a controller.properties
// kraftlab wrote for a joining controller names.
func controllerListener(t *testing.T, props string) string {
	t.Helper()
	b, err := os.ReadFile(props)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "listeners=CONTROLLER://"); ok {
			return v
		}
	}
	t.Fatalf("%s names no CONTROLLER listener:\n%s", props, b)
	return ""
}

// directoryID is the directory.id of node id's meta.properties.
func directoryID(t *testing.T, dataDir string, id int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, fmt.Sprintf("node-%d", id), "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "directory.id="); ok {
			return v
		}
	}
	t.Fatalf("node %d's meta.properties has no directory.id", id)
	return ""
}

// Kafka's kafka-metadata-quorum grows a dynamic kraftlab quorum from one
// controller to three (add-controller with the controller.properties of
// each, started as an observer by controllers add --observer), and shrinks
// it again once the first leader is killed (remove-controller).
func TestMetadataQuorumAddRemoveController(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "0", "--profile", "fast", "--set", "kraft.version=1")
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
	listeners := map[int]string{1: p.Controllers[1]}
	for _, id := range []int{2, 3} {
		run("controllers", "add", "--observer")
		props := filepath.Join(p.DataDir, fmt.Sprintf("node-%d", id), "controller.properties")
		listeners[id] = controllerListener(t, props)
		r := runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", p.Controllers[1], "--command-config", props, "add-controller")
		if r.Err != nil {
			t.Fatalf("add-controller %d: %v", id, r.Err)
		}
		if want := fmt.Sprintf("Added controller %d with directory id %s", id, directoryID(t, p.DataDir, id)); !strings.Contains(r.Stdout, want) {
			t.Errorf("add-controller printed %q, want %q", r.Stdout, want)
		}
		run("wait", "voters", "==", fmt.Sprint(id))
		run("wait", "voter", fmt.Sprint(id))
	}
	r := runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", p.Controllers[1], "describe", "--status")
	if r.Err != nil {
		t.Fatalf("describe --status: %v", r.Err)
	}
	for id, l := range listeners {
		want := fmt.Sprintf(`{"id": %d, "directoryId": "%s", "endpoints": ["CONTROLLER://%s"]}`, id, directoryID(t, p.DataDir, id), l)
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("describe --status does not list %s:\n%s", want, r.Stdout)
		}
	}

	run("kill", "1")
	run("wait", "new-leader")
	r = runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", listeners[2]+","+listeners[3], "remove-controller",
		"--controller-id", "1", "--controller-directory-id", directoryID(t, p.DataDir, 1))
	if r.Err != nil {
		t.Fatalf("remove-controller 1: %v", r.Err)
	}
	run("wait", "voters", "==", "2")
	r = runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", listeners[2], "describe", "--status")
	if r.Err != nil || strings.Contains(r.Stdout, `{"id": 1,`) || !strings.Contains(r.Stdout, `{"id": 2,`) || !strings.Contains(r.Stdout, `{"id": 3,`) {
		t.Errorf("describe --status after remove-controller 1 (%v):\n%s", r.Err, r.Stdout)
	}
}

// quorumIDs are the voter and observer ids a describe --status prints.
type quorumIDs struct {
	leader            string
	voters, observers []int
}

func (q quorumIDs) String() string {
	return fmt.Sprintf("voters %v, observers %v", q.voters, q.observers)
}

// describeIDs runs describe --status against boot and reads the ids in
// it; ok is false when the tool failed.
func describeIDs(t *testing.T, k *Kafka, boot string) (quorumIDs, bool) {
	t.Helper()
	r := k.Run(context.Background(), 90*time.Second, MainMetadataQuorum, "--bootstrap-controller", boot, "describe", "--status")
	if r.Err != nil {
		return quorumIDs{}, false
	}
	_, vals := ParseStatus(r.Stdout)
	var q quorumIDs
	q.leader = vals["LeaderId"]
	for _, f := range []struct {
		key string
		out *[]int
	}{{"CurrentVoters", &q.voters}, {"CurrentObservers", &q.observers}} {
		var rows []struct {
			ID int `json:"id"`
		}
		if err := json.Unmarshal([]byte(vals[f.key]), &rows); err != nil {
			return quorumIDs{}, false
		}
		for _, r := range rows {
			*f.out = append(*f.out, r.ID)
		}
		slices.Sort(*f.out)
	}
	return q, true
}

// untilIDs runs describe --status against boot until it prints want, and
// fails t after a minute.
func untilIDs(t *testing.T, k *Kafka, side, boot string, want quorumIDs) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last quorumIDs
	for time.Now().Before(deadline) {
		q, ok := describeIDs(t, k, boot)
		if ok && slices.Equal(q.voters, want.voters) && slices.Equal(q.observers, want.observers) {
			t.Logf("%s: %v", side, q)
			return
		}
		last = q
	}
	t.Fatalf("%s: describe --status says %v, want %v", side, last, want)
}

// The same growth on Kafka 4.4 and on kraftlab, from a standalone
// controller to three and back to two, step by step with Kafka's own
// kafka-metadata-quorum, agrees at each step on the voters and observers
// describe --status prints.
func TestGrowQuorumAgreesWithKafka(t *testing.T) {
	k := needKafka(t)
	ctx := context.Background()
	dir := t.TempDir()
	kc, err := StartKafkaStandalone(ctx, k, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	p := startPlayground(t, "--controllers", "1", "--brokers", "0", "--profile", "fast", "--set", "kraft.version=1")
	if out, err := p.Run(ctx, "wait", "leader"); err != nil {
		t.Fatalf("wait leader: %v\n%s", err, out)
	}
	kafkaBoot, labBoot := kc.Nodes[1].Addr, p.Controllers[1]
	step := func(want quorumIDs) {
		t.Helper()
		untilIDs(t, k, "kafka", kafkaBoot, want)
		untilIDs(t, k, "kraftlab", labBoot, want)
	}
	step(quorumIDs{voters: []int{1}})

	for _, id := range []int32{2, 3} {
		kn, err := kc.AddDynamicController(ctx, dir, id, "--no-initial-controllers")
		if err != nil {
			t.Fatal(err)
		}
		if out, err := p.Run(ctx, "controllers", "add", "--observer"); err != nil {
			t.Fatalf("controllers add --observer: %v\n%s", err, out)
		}
		var voters []int
		for v := 1; v < int(id); v++ {
			voters = append(voters, v)
		}
		step(quorumIDs{voters: voters, observers: []int{int(id)}})
		labProps := filepath.Join(p.DataDir, fmt.Sprintf("node-%d", id), "controller.properties")
		for _, side := range []struct{ name, boot, props string }{{"kafka", kafkaBoot, kn.Props()}, {"kraftlab", labBoot, labProps}} {
			if r := runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", side.boot, "--command-config", side.props, "add-controller"); r.Err != nil {
				t.Fatalf("%s: add-controller %d: %v", side.name, id, r.Err)
			}
		}
		step(quorumIDs{voters: append(voters, int(id))})
	}

	// A dynamic quorum's quorum-state is Kafka's data_version 1 on both:
	// no voter list, and a vote names a directory.
	for _, id := range []int32{1, 2, 3} {
		kq, err := ReadQuorumStateFile(kc.Nodes[id].QuorumStateFile())
		if err != nil {
			t.Fatal(err)
		}
		lq, err := ReadQuorumStateFile(filepath.Join(p.DataDir, fmt.Sprintf("node-%d", id), "__cluster_metadata-0", "quorum-state"))
		if err != nil {
			t.Fatal(err)
		}
		if kq.DataVersion != lq.DataVersion || !slices.Equal(kq.Keys, lq.Keys) {
			t.Errorf("controller %d's quorum-state: Kafka data_version %d keys %v, kraftlab data_version %d keys %v", id, kq.DataVersion, kq.Keys, lq.DataVersion, lq.Keys)
		}
	}

	// Controller 1 removes itself: it leads until the change commits,
	// then resigns.
	kafkaDir, labDir := "", directoryID(t, p.DataDir, 1)
	if r := runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", kafkaBoot, "describe", "--status"); r.Err == nil {
		_, vals := ParseStatus(r.Stdout)
		var rows []struct {
			ID  int    `json:"id"`
			Dir string `json:"directoryId"`
		}
		if json.Unmarshal([]byte(vals["CurrentVoters"]), &rows) == nil {
			for _, r := range rows {
				if r.ID == 1 {
					kafkaDir = r.Dir
				}
			}
		}
	}
	if kafkaDir == "" {
		t.Fatal("Kafka's describe --status names no directory id for controller 1")
	}
	for _, side := range []struct{ name, boot, dir string }{{"kafka", kafkaBoot, kafkaDir}, {"kraftlab", labBoot, labDir}} {
		if r := runTool(t, k, MainMetadataQuorum, "--bootstrap-controller", side.boot, "remove-controller", "--controller-id", "1", "--controller-directory-id", side.dir); r.Err != nil {
			t.Fatalf("%s: remove-controller 1: %v", side.name, r.Err)
		}
	}
	// Asked of the voters that stay: controller 1 no longer answers
	// DescribeQuorum as the leader.
	kafkaBoot = kc.Nodes[2].Addr + "," + kc.Nodes[3].Addr
	labBoot = labListener(t, p, 2) + "," + labListener(t, p, 3)
	// Kafka's removed controller looks for the next leader only among
	// its bootstrap servers, itself alone, and is no observer in
	// DescribeQuorum; kraftlab's also asks the voters its log names, finds
	// the leader and fetches on as one (docs/design.md, Differences).
	untilIDs(t, k, "kafka", kafkaBoot, quorumIDs{voters: []int{2, 3}})
	untilIDs(t, k, "kraftlab", labBoot, quorumIDs{voters: []int{2, 3}, observers: []int{1}})
	t.Logf("DIFFERENCE: a removed controller that runs on is an observer of kraftlab's quorum, not of Kafka's")
}

// labListener is the listener of controller id, which controllers add
// started, from the controller.properties it wrote.
func labListener(t *testing.T, p *Playground, id int) string {
	t.Helper()
	return controllerListener(t, filepath.Join(p.DataDir, fmt.Sprintf("node-%d", id), "controller.properties"))
}
