package cli

import (
	"bytes"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// reassign goes through the control API to the engine (the model's moves
// complete at once) and refuses what makes no sense before it is sent.
func TestReassignCommand(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("topics", "create", "orders", "--partitions", "1")
	expectRun(t, "topics create", code, out, errOut, ExitOK)

	code, out, errOut = h.run("reassign", "orders-0", "--replicas", "101", "--throttle", "1000")
	expectRun(t, "reassign", code, out, errOut, ExitOK, "orders-0 reassignment to 101", "the inter-broker throttle limit was set to 1000 B/s")
	code, out, errOut = h.run("reassign", "--list")
	expectRun(t, "reassign --list", code, out, errOut, ExitOK, "No partition reassignments found.")
	code, out, errOut = h.run("reassign", "--verify", "orders-0")
	expectRun(t, "reassign --verify", code, out, errOut, ExitOK, "reassignment of orders-0 complete; replication throttles removed")
	code, out, errOut = h.run("reassign", "--cancel", "orders-0")
	expectRun(t, "reassign --cancel", code, out, errOut, ExitOK, "orders-0 NO_REASSIGNMENT_IN_PROGRESS")
	code, out, errOut = h.run("reassign", "nosuch-0", "--replicas", "101")
	expectRun(t, "reassign an unknown partition", code, out, errOut, ExitOK, "nosuch-0 UNKNOWN_TOPIC_OR_PARTITION")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reassign", "orders-0"}, "reassign names the partitions and their target replicas"},
		{[]string{"reassign", "--replicas", "101"}, "reassign names the partitions and their target replicas"},
		{[]string{"reassign", "orders-0", "--replicas", "101,x"}, `bad --replicas "101,x"`},
		{[]string{"reassign", "orders-0", "--replicas", "101", "--throttle", "0"}, "--throttle is a rate in bytes a second above 0"},
		{[]string{"reassign", "--list", "--replicas", "101"}, "--replicas and --throttle go with a move, not with --list"},
		{[]string{"reassign", "--list", "--cancel"}, "none of the others can be"},
		{[]string{"reassign", "--list", "orders-0"}, "--list lists every reassignment: it takes no partitions"},
		{[]string{"reassign", "--cancel"}, "--cancel: name the partitions"},
		{[]string{"reassign", "orders", "--replicas", "101"}, `bad partition "orders"`},
	} {
		code, out, errOut := h.run(c.args...)
		expectRun(t, c.args[1], code, out, errOut, ExitUsage, c.want)
	}
}

// topics describe tells a partition being reassigned, as kafka-topics
// --describe adds its Adding Replicas and Removing Replicas.
func TestTopicsDescribeTellsAReassignment(t *testing.T) {
	var b bytes.Buffer
	err := writePartitions(&b, []view.Topic{{Name: "orders", Partitions: []view.Partition{{Partition: 0, Leader: 101, Replicas: []int32{102, 103, 104, 101},
		Isr: []int32{101, 102, 103}, AddingReplicas: []int32{104}, RemovingReplicas: []int32{101}, HighWatermark: 5}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "orders-0 is being reassigned: adding replicas 104, removing replicas 101"; !bytes.Contains(b.Bytes(), []byte(want)) {
		t.Fatalf("topics describe lacks %q:\n%s", want, b.String())
	}
}
