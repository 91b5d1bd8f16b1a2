package condition

import (
	"errors"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func TestParseNodeRef(t *testing.T) {
	for in, want := range map[string]string{"1": "1", "101": "101", "leader": "leader", "LEADER": "leader", "old-leader": "old-leader", "0": "0"} {
		r, err := ParseNodeRef(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseNodeRef(%q) = %q, %v; want %q", in, r, err, want)
		}
	}
	for _, in := range []string{"", "-1", "x", "1.5", "2147483648", "leaders"} {
		if _, err := ParseNodeRef(in); err == nil || !strings.Contains(err.Error(), "want a node ID") {
			t.Errorf("ParseNodeRef(%q) = %v", in, err)
		}
	}
}

func TestResolveNodeRef(t *testing.T) {
	v := derived(engineView(), nil)
	mustParse := func(s string) NodeRef {
		r, err := ParseNodeRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if id, err := mustParse("leader").Resolve(&v); err != nil || id != 2 {
		t.Errorf("leader = %d, %v", id, err)
	}
	if id, err := mustParse("101").Resolve(&v); err != nil || id != 101 {
		t.Errorf("101 = %d, %v", id, err)
	}
	if _, err := mustParse("7").Resolve(&v); !errors.Is(err, ErrUnknownNode) || err.Error() != "unknown node 7 (nodes: 1, 2, 3, 101, 102)" {
		t.Errorf("7 = %v", err)
	}
	if _, err := mustParse("old-leader").Resolve(&v); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("old-leader without baseline = %v", err)
	}
	v.Baseline = &view.Baseline{Action: "isolate", LeaderID: 1}
	if id, err := mustParse("old-leader").Resolve(&v); err != nil || id != 1 {
		t.Errorf("old-leader = %d, %v", id, err)
	}
	v.Baseline.LeaderID = view.NoLeader
	if _, err := mustParse("old-leader").Resolve(&v); !errors.Is(err, ErrNoLeader) || !strings.Contains(err.Error(), "before the last isolate") {
		t.Errorf("old-leader with no leader then = %v", err)
	}
	v.LeaderID = view.NoLeader
	if _, err := mustParse("leader").Resolve(&v); !errors.Is(err, ErrNoLeader) {
		t.Errorf("leader with none = %v", err)
	}
	if _, err := (NodeRef{}).Resolve(&v); err == nil {
		t.Error("zero ref resolved")
	}
}

func TestResolveFollowerAndTarget(t *testing.T) {
	v := derived(engineView(), nil)
	follower, _ := ParseNodeRef("follower")
	target, _ := ParseNodeRef("TARGET")
	if follower.String() != "follower" || target.String() != "target" || !follower.IsFollower() {
		t.Fatalf("parsed %q %q", follower, target)
	}
	if id, err := follower.Resolve(&v); err != nil || id != 1 {
		t.Errorf("follower = %d, %v; want 1, the lowest running follower", id, err)
	}
	n1, _ := v.Node(1)
	n1.State = view.StateIsolated
	if id, err := follower.Resolve(&v); err != nil || id != 3 {
		t.Errorf("follower with 1 isolated = %d, %v; want 3", id, err)
	}
	n3, _ := v.Node(3)
	n3.Epoch = 4 // node 3 follows an older epoch
	if _, err := follower.Resolve(&v); !errors.Is(err, ErrNoFollower) || err.Error() != "no follower: no running voter follows leader 2 in epoch 5" {
		t.Errorf("no follower = %v", err)
	}
	v.LeaderID = view.NoLeader
	if _, err := follower.Resolve(&v); !errors.Is(err, ErrNoLeader) {
		t.Errorf("follower without a leader = %v", err)
	}
	if _, err := target.Resolve(&v); !errors.Is(err, ErrNoBaseline) || !strings.Contains(err.Error(), "no kill, stop, isolate, resign, wipe, disk or mark yet") {
		t.Errorf("target without baseline = %v", err)
	}
	v.Baseline = &view.Baseline{Action: "wipe", NodeID: 3, LeaderID: 2}
	if id, err := target.Resolve(&v); err != nil || id != 3 {
		t.Errorf("target = %d, %v", id, err)
	}
	if id, ok := NodeID(7).ID(); !ok || id != 7 {
		t.Errorf("NodeID(7).ID() = %d, %t", id, ok)
	}
	if _, ok := follower.ID(); ok {
		t.Error("follower has a literal ID")
	}
}

func TestConditionsWithFollower(t *testing.T) {
	v := derived(engineView(), nil)
	c, err := Parse("node follower log-end >= 100")
	if err != nil {
		t.Fatal(err)
	}
	if ok, saw, err := c.Eval(&v); !ok || err != nil || !strings.Contains(saw, "node 1 log-end 100") {
		t.Errorf("node follower log-end >= 100 = %t %q %v", ok, saw, err)
	}
	if refs := c.Nodes(); len(refs) != 1 || !refs[0].IsFollower() {
		t.Errorf("Nodes() = %v", refs)
	}
	for i := range v.Nodes {
		if v.Nodes[i].Role == view.RoleFollower {
			v.Nodes[i].State = view.StateKilled
		}
	}
	// No follower yet: a wait goes on waiting, an expect fails; neither is an error.
	if ok, saw, err := c.Eval(&v); ok || err != nil || !strings.Contains(saw, "no follower yet") {
		t.Errorf("with no follower = %t %q %v", ok, saw, err)
	}
	if _, err := Parse("leader == follower"); err == nil || !strings.Contains(err.Error(), "compare with a node ID, old-leader or target, not follower") {
		t.Errorf("leader == follower = %v", err)
	}
	if c, err := Parse("leader != target"); err != nil || len(c.Nodes()) != 1 {
		t.Errorf("leader != target = %v", err)
	}
	if c, _ := Parse("caught-up"); c.Nodes() != nil {
		t.Errorf("caught-up names nodes")
	}
}

// leader-of and follower-of name a partition's brokers from the committed
// metadata; a partition that is not there, or has no leader, says so.
// Without a leader, follower-of names the replica outside the ISR and
// the ELR.
func TestPartitionNodeRefs(t *testing.T) {
	v := view.View{
		Nodes: []view.Node{{ID: 1, Kind: view.KindController}, {ID: 101, Kind: view.KindBroker}, {ID: 102, Kind: view.KindBroker}, {ID: 103, Kind: view.KindBroker}},
		Topics: []view.Topic{{Name: "pay-ments", Partitions: []view.Partition{
			{Partition: 0, Leader: 102, Replicas: []int32{103, 102, 101}, Isr: []int32{103, 102, 101}},
			{Partition: 1, Leader: view.NoLeader, Replicas: []int32{101}},
			{Partition: 2, Leader: view.NoLeader, Replicas: []int32{101, 102, 103}, Isr: []int32{101}},
			{Partition: 3, Leader: 103, Replicas: []int32{101, 102, 103}, Isr: []int32{103, 102}},
			// The last ISR member fenced with ELR on: the ISR is empty and
			// 101 is eligible, so the unclean candidate is 102.
			{Partition: 4, Leader: view.NoLeader, Replicas: []int32{101, 102}, Isr: []int32{}, Elr: []int32{101}, LastKnownElr: []int32{101}},
		}}},
	}
	for in, want := range map[string]int32{"leader-of:pay-ments-0": 102, "follower-of:pay-ments-0": 101, "LEADER-OF:pay-ments-0": 102, "follower-of:pay-ments-2": 102, "follower-of:pay-ments-1": 101, "follower-of:pay-ments-3": 102, "follower-of:pay-ments-4": 102} {
		r, err := ParseNodeRef(in)
		if err != nil {
			t.Fatalf("ParseNodeRef(%q): %v", in, err)
		}
		if id, err := r.Resolve(&v); err != nil || id != want {
			t.Errorf("%s = %d, %v; want %d", in, id, err, want)
		}
	}
	if r, _ := ParseNodeRef("leader-of:pay-ments-0"); r.String() != "leader-of:pay-ments-0" {
		t.Errorf("String() = %q", r)
	}
	for in, want := range map[string]error{"leader-of:pay-ments-1": ErrNoLeader, "leader-of:pay-ments-7": ErrNoPartition, "follower-of:other-0": ErrNoPartition} {
		r, _ := ParseNodeRef(in)
		if _, err := r.Resolve(&v); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", in, err, want)
		}
	}
	for _, in := range []string{"leader-of:", "leader-of:orders", "leaders-of:orders-0", "follower-of:orders-x"} {
		if _, err := ParseNodeRef(in); err == nil {
			t.Errorf("ParseNodeRef(%q) accepted", in)
		}
	}
}
