package condition

import (
	"slices"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/kafkahash"
)

// groupsView is dataPlaneView with a 3-partition __consumer_offsets whose
// partition of group billing broker 103 leads (101 the others), billing
// Stable with two members on 103, 10 behind on orders-0 and with
// orders-1 leaderless, and reports Empty on 101, caught up on orders-0.
func groupsView() view.View {
	v := dataPlaneView()
	billing := kafkahash.GroupPartition("billing", 3)
	offsets := view.Topic{Name: view.OffsetsTopic, ID: "o"}
	for p := range int32(3) {
		leader := int32(101)
		if p == billing {
			leader = 103
		}
		offsets.Partitions = append(offsets.Partitions, view.Partition{Partition: p, Leader: leader, Replicas: []int32{101, 103}, Isr: []int32{101, 103}})
	}
	v.Topics = append(v.Topics, offsets)
	v.Groups = []view.Group{
		{ID: "reports", Coordinator: 101, OffsetsPartition: kafkahash.GroupPartition("reports", 3), State: view.GroupEmpty,
			Offsets: []view.GroupOffset{{Topic: "orders", Partition: 0, Committed: 50, HighWatermark: 50, Lag: 0}}},
		{ID: "billing", Coordinator: 103, OffsetsPartition: billing, State: view.GroupStable, ProtocolType: "consumer", Protocol: "range", Generation: 4,
			Members: []view.GroupMember{{MemberID: "a"}, {MemberID: "b"}},
			Offsets: []view.GroupOffset{{Topic: "orders", Partition: 0, Committed: 40, HighWatermark: 50, Lag: 10}, {Topic: "orders", Partition: 1, Committed: 5, HighWatermark: -1, Lag: -1}}},
	}
	return v
}

func TestGroupConditions(t *testing.T) {
	v := derived(groupsView(), nil)
	checkConditions(t, &v, []conditionCase{
		{"group-stable billing", true, "group billing Stable, generation 4, 2 members, coordinator 103"},
		{"group-stable reports", false, "group reports Empty"},
		{"group-stable payroll", false, "no running broker serves group payroll yet (groups served: reports, billing)"},
		{"group-members billing == 2", true, ""},
		{"group-members reports > 0", false, "0 members"},
		{"group-lag reports == 0", true, "lag 0"},
		{"group-lag billing >= 0", false, "a partition's high watermark is unknown"},
		{"group-coordinator billing == 103", true, ""},
		{"group-coordinator billing != 103", false, ""},
		{"group-coordinator reports == coordinator-of:reports", true, "coordinator 101"},
		{"unfenced coordinator-of:billing", false, "broker 103 RECOVERY"},
		{"partition-leader orders-0 != coordinator-of:billing", true, ""},
	})
}

// coordinator-of names the leader of the group's partition whether or
// not the group exists, and says why when there is none.
func TestCoordinatorOfResolves(t *testing.T) {
	v := derived(groupsView(), nil)
	r, err := ParseNodeRef("coordinator-of:payroll")
	if err != nil {
		t.Fatal(err)
	}
	want := int32(101) // payroll's partition is not billing's
	if id, err := r.Resolve(&v); err != nil || id != want {
		t.Fatalf("coordinator-of:payroll = %d, %v; want %d", id, err, want)
	}
	p, _ := v.Partition(view.OffsetsTopic, kafkahash.GroupPartition("payroll", 3))
	p.Leader = view.NoLeader
	if _, err := r.Resolve(&v); err == nil || !strings.Contains(err.Error(), "coordinator-of:payroll: no coordinator: __consumer_offsets-") {
		t.Fatalf("leaderless partition: %v", err)
	}
	v.Topics = slices.DeleteFunc(v.Topics, func(t view.Topic) bool { return t.Name == view.OffsetsTopic })
	if _, err := r.Resolve(&v); err == nil || !strings.Contains(err.Error(), "__consumer_offsets does not exist yet") {
		t.Fatalf("no offsets topic: %v", err)
	}
	for in, want := range map[string]string{
		"coordinator-of:":     "want coordinator-of:GROUP",
		"coordinatorof:x":     "want leader-of:TOPIC-P, follower-of:TOPIC-P or coordinator-of:GROUP",
		"group-lag billing":   "want group-lag GROUP OP V",
		"group-stable":        "want group-stable GROUP",
		"group-members x ~ 1": `bad operator "~"`,
	} {
		var err error
		if strings.Contains(in, " ") || strings.HasPrefix(in, "group") {
			_, err = Parse(in)
		} else {
			_, err = ParseNodeRef(in)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
}
