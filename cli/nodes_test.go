package cli

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// nodes says under its table why a node failed and what a node refused
// for safety, with the way out when Kafka would have stopped.
func TestNodesExplainFailuresAndRefusals(t *testing.T) {
	v := view.View{Nodes: []view.Node{
		{ID: 1, Kind: view.KindController, State: view.StateFailed, Error: "open quorum-state: bad JSON"},
		{ID: 2, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower,
			Refusals: &view.Refusals{Count: 228, Last: "a truncation below the high watermark 160", KafkaStops: true}},
		{ID: 3, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower,
			Refusals:  &view.Refusals{Count: 1, Last: "a Vote in epoch 2147483647"},
			Strangers: &view.Strangers{AuthFailures: 1, Unauthorized: map[string]int64{"Fetch": 2}}},
	}}
	var b strings.Builder
	if err := writeNodes(&b, &v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"node 1 failed: open quorum-state: bad JSON",
		"node 2 refused news that would break Raft's safety 228 times; the latest: a truncation below the high watermark 160",
		"kraftlab wipe 2",
		"node 3 refused news that would break Raft's safety once; the latest: a Vote in epoch 2147483647",
		"node 3 refused strangers: 1 failed authentication; 2 Fetch requests from unauthenticated clients (CLUSTER_AUTHORIZATION_FAILED)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("nodes lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kraftlab wipe 3") {
		t.Errorf("a harmless refusal got the way out of a stuck node:\n%s", out)
	}
}

// A node that stopped on a full disk says so and what its own restarts
// are doing; one whose snapshot failed says it runs on.
func TestNodesExplainDiskFaults(t *testing.T) {
	v := view.View{Nodes: []view.Node{
		{ID: 1, Kind: view.KindController, State: view.StateFailed, Error: "disk full: append to 00000000000000000000.log: no space left on device",
			Restart: &view.Restart{Attempts: 3, LastError: "disk full: probe: no space left on device"}},
		{ID: 2, Kind: view.KindController, State: view.StateRunning, Role: view.RoleLeader,
			SnapshotError: "disk full: append to snapshot: no space left on device"},
	}}
	var b strings.Builder
	if err := writeNodes(&b, &v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"node 1 failed: disk full: append to 00000000000000000000.log: no space left on device",
		"it starts again by itself once its folder takes writes: 3 probes refused, the last: disk full: probe: no space left on device",
		"node 2 could not write a snapshot: disk full: append to snapshot: no space left on device; it runs on from its log",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("nodes lacks %q:\n%s", want, out)
		}
	}
}

// A running node with cut links says partitioned, in the table and under
// it, with the way back.
func TestNodesSayPartitioned(t *testing.T) {
	v := view.View{
		Nodes: []view.Node{
			{ID: 1, Kind: view.KindController, State: view.StateRunning, Role: view.RoleLeader},
			{ID: 2, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower},
			{ID: 3, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower},
		},
		Links: []view.Link{{From: 1, To: 2, Down: true}, {From: 2, To: 1, Down: true}, {From: 3, To: 2, Down: true}},
	}
	var b strings.Builder
	if err := writeNodes(&b, &v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	for i, want := range map[int]string{1: "partitioned", 2: "partitioned", 3: "partitioned"} {
		if f := strings.Fields(lines[i]); len(f) < 4 || f[3] != want {
			t.Errorf("node %d's state: %q, want %s\n%s", i, lines[i], want, out)
		}
	}
	for _, want := range []string{
		"node 1 is partitioned: cut off from 2 (undo: kraftlab heal 1)",
		"node 2 is partitioned: cut off from 1; what 3 sends it is dropped (undo: kraftlab heal 2)",
		"node 3 is partitioned: what it sends 2 is dropped (undo: kraftlab heal 3)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("nodes lacks %q:\n%s", want, out)
		}
	}
}
