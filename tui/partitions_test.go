package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// replicationView has topic orders of replication factor 3 on brokers
// 101–103: partition 0 led by 101 with 102 behind by 30 and 103 down and
// out of the ISR; partition 1 led by 102, every replica caught up.
func replicationView(now int64) view.View {
	v := brokersView(now)
	for i := range v.Nodes {
		if v.Nodes[i].ID == 103 {
			v.Nodes[i].State = view.StateKilled
		}
	}
	hosted := func(id int32, end int64, leading bool) view.PartitionReplica {
		return view.PartitionReplica{Broker: id, Hosted: true, LogEndOffset: end, HighWatermark: end, Leading: leading, LeaderLogEndOffset: -1, LeaderLastCaughtUpTimestamp: -1}
	}
	down := view.PartitionReplica{Broker: 103, LogStartOffset: -1, LogEndOffset: -1, HighWatermark: -1, LeaderLogEndOffset: -1, LeaderLastCaughtUpTimestamp: -1}
	v.Topics = []view.Topic{{Name: "orders", ID: "T3JkZXJzT3JkZXJzT3JkZQ", OnBrokers: []int32{101, 102}, Partitions: []view.Partition{
		{Partition: 0, Leader: 101, LeaderEpoch: 2, Replicas: []int32{101, 102, 103}, Isr: []int32{101, 102}, HighWatermark: 90,
			ReplicaStates: []view.PartitionReplica{hosted(101, 120, true), hosted(102, 90, false), down}},
		{Partition: 1, Leader: 102, LeaderEpoch: 0, Replicas: []int32{102, 101, 103}, Isr: []int32{102, 101, 103}, HighWatermark: 75,
			ReplicaStates: []view.PartitionReplica{hosted(102, 75, true), hosted(101, 75, false), down}},
	}}}
	return v
}

func partitionsText(m *partitionsModel, v *view.View, w, h int) string {
	return ansi.Strip(strings.Join(m.view(DefaultStyles(), v, w, h), "\n"))
}

// The partitions panel shows each partition's leader epoch and high
// watermark, and each replica's log end as its broker holds it: the
// leader starred, a follower behind the leader by how much, one caught up
// with "=", one out of the ISR crossed, one whose broker is down as down.
func TestPartitionsPanelShowsIsrHighWatermarkAndLogEnds(t *testing.T) {
	v := replicationView(1_000_000)
	var m partitionsModel
	m.add(&v)
	out := partitionsText(&m, &v, 80, 10)
	for _, want := range []string{
		"Partitions: ISR, high watermark, each replica's log end (b: fetchers)",
		"orders-0       2      90 *101 120           102 90 -30       ✗103 down",
		"orders-1       0      75 *102 75            101 75 =          103 down",
		// Every mark the cells carry is in the legend, on one line.
		"* leader  ✗ out of the ISR  = caught up  -N behind  ↓A→B truncated from A to B",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("partitions panel lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if ansi.StringWidth(line) > 80 {
			t.Errorf("line wider than 80 cells: %q", line)
		}
	}
}

// A replica whose log end goes back (a follower truncating to its
// leader) is marked with where it was, for a while of view time, then
// the mark goes.
func TestPartitionsPanelMarksALogEndThatWentBack(t *testing.T) {
	now := int64(1_000_000)
	v := replicationView(now)
	var m partitionsModel
	m.add(&v)
	if out := partitionsText(&m, &v, 80, 10); strings.Contains(out, "↓") && !strings.Contains(out, "↓A→B") {
		t.Fatalf("a replica is marked as gone back before any did:\n%s", out)
	}
	later := replicationView(now + 500)
	later.Topics[0].Partitions[0].ReplicaStates[1].LogEndOffset = 70
	m.add(&later)
	if out := partitionsText(&m, &later, 80, 10); !strings.Contains(out, " 102 70 ↓90→70") {
		t.Errorf("the follower that went back from 90 to 70 is not marked:\n%s", out)
	}
	gone := replicationView(now + 500 + wentBackShown + 1)
	gone.Topics[0].Partitions[0].ReplicaStates[1].LogEndOffset = 80
	m.add(&gone)
	if out := partitionsText(&m, &gone, 80, 10); strings.Contains(out, "↓90") || !strings.Contains(out, " 102 80 -40") {
		t.Errorf("the mark stays after %dms, or the lag is not back:\n%s", wentBackShown, out)
	}
}

// A replica whose broker is down keeps its last log end: if it comes back
// shorter (a wiped disk), that shows as going back too.
func TestPartitionsPanelRemembersLogEndsAcrossARestart(t *testing.T) {
	v := replicationView(1_000_000)
	v.Topics[0].Partitions[1].ReplicaStates[2] = view.PartitionReplica{Broker: 103, Hosted: true, LogEndOffset: 75}
	var m partitionsModel
	m.add(&v)
	down := replicationView(1_000_100)
	m.add(&down)
	back := replicationView(1_000_200)
	back.Topics[0].Partitions[1].ReplicaStates[2] = view.PartitionReplica{Broker: 103, Hosted: true, LogEndOffset: 0}
	m.add(&back)
	if out := partitionsText(&m, &back, 80, 10); !strings.Contains(out, " 103 0 ↓75→0") {
		t.Errorf("a replica back with a shorter log is not marked:\n%s", out)
	}
}

// With nothing to show the panel says why; with more partitions than
// lines it says how many it hides.
func TestPartitionsPanelSaysWhyOrWhatItHides(t *testing.T) {
	v := replicationView(1_000_000)
	v.Topics = nil
	var m partitionsModel
	if out := partitionsText(&m, &v, 80, 10); !strings.Contains(out, "no topics yet — press T to create one") {
		t.Errorf("an empty partitions panel does not say why:\n%s", out)
	}
	v = replicationView(1_000_000)
	for p := int32(2); p < 10; p++ {
		part := v.Topics[0].Partitions[1]
		part.Partition = p
		v.Topics[0].Partitions = append(v.Topics[0].Partitions, part)
	}
	out := partitionsText(&m, &v, 80, 6)
	if got := len(strings.Split(out, "\n")); got != 6 {
		t.Errorf("a 6-line panel has %d lines:\n%s", got, out)
	}
	if !strings.Contains(out, "… 7 more partitions") {
		t.Errorf("a short partitions panel does not say what it hides:\n%s", out)
	}
}

// A topic deleted and created again under its name has new, shorter logs:
// they do not read as going back, and the deleted topic's replicas are
// forgotten.
func TestPartitionsPanelTellsARecreatedTopicFromATruncation(t *testing.T) {
	v := replicationView(1_000_000)
	var m partitionsModel
	m.add(&v)
	again := replicationView(1_000_500)
	again.Topics[0].ID = "TmV3T3JkZXJzTmV3T3JkZQ"
	again.Topics[0].Partitions[0].ReplicaStates[1].LogEndOffset = 3
	m.add(&again)
	if out := partitionsText(&m, &again, 80, 10); strings.Contains(out, "↓90") {
		t.Errorf("a recreated topic's new log reads as going back:\n%s", out)
	}
	for k := range m.replicas {
		if k.topicID == v.Topics[0].ID {
			t.Errorf("the deleted topic's replica %+v is still remembered", k)
		}
	}
}

// A replica the view has no state for shows as unknown, not as down, and
// the cells follow the registration's replica order.
func TestPartitionsPanelReplicaWithoutState(t *testing.T) {
	v := replicationView(1_000_000)
	v.Topics[0].Partitions[1].ReplicaStates = v.Topics[0].Partitions[1].ReplicaStates[:1]
	var m partitionsModel
	m.add(&v)
	if out := partitionsText(&m, &v, 80, 10); !strings.Contains(out, "orders-1       0      75 *102 75            101 ?             103 ?") {
		t.Errorf("replicas without state are not shown as unknown:\n%s", out)
	}
}
