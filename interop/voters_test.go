package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
