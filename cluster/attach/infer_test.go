package attach

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func broker(id int32, state view.State, fenced bool) view.Node {
	return view.Node{ID: id, Kind: view.KindBroker, State: state, Broker: &view.Broker{Registered: true, Fenced: fenced}}
}

// Two polls become the events a learner would have been told, each
// marked inferred; an election names the epoch before the one with no
// leader.
func TestInfer(t *testing.T) {
	steady := view.View{LeaderID: 1, LeaderEpoch: 7, Nodes: []view.Node{{ID: 1, Kind: view.KindController, State: view.StateRunning}, broker(101, view.StateRunning, false)},
		Topics: []view.Topic{{Name: "orders", Partitions: []view.Partition{{Partition: 0, Leader: 101, LeaderEpoch: 0, Isr: []int32{101}}}}}}
	seen := leadership{1, 7}
	if evs := infer(&steady, &steady, &seen); len(evs) != 0 {
		t.Fatalf("no change gave %v", evs)
	}
	gone := view.View{LeaderID: view.NoLeader, LeaderEpoch: view.NoLeader, Nodes: []view.Node{{ID: 1, Kind: view.KindController, State: view.StateUnreachable}, broker(101, view.StateUnreachable, true)}}
	evs := infer(&steady, &gone, &seen)
	want := []cluster.EventKind{cluster.EventElection, EventUnreachable, EventUnreachable, cluster.EventBrokerFenced, cluster.EventTopicDeleted}
	checkKinds(t, evs, want)
	back := view.View{LeaderID: 2, LeaderEpoch: 8, Nodes: []view.Node{{ID: 1, Kind: view.KindController, State: view.StateUnreachable}, broker(101, view.StateRunning, false), broker(102, view.StateRunning, false)},
		Topics: []view.Topic{{Name: "orders", Partitions: []view.Partition{{Partition: 0, Leader: 101, LeaderEpoch: 1, Isr: []int32{101}}}}}}
	evs = infer(&gone, &back, &seen)
	checkKinds(t, evs, []cluster.EventKind{cluster.EventElection, EventReachable, cluster.EventBrokerUnfenced, cluster.EventBrokerRegistered, cluster.EventTopicCreated})
	if !strings.Contains(evs[0].Message, "epoch 7 → 8: a new leader, 2") {
		t.Errorf("election: %q", evs[0].Message)
	}
	if seen != (leadership{2, 8}) {
		t.Errorf("seen %+v", seen)
	}
	moved := back
	moved.Topics = []view.Topic{{Name: "orders", Partitions: []view.Partition{{Partition: 0, Leader: 102, LeaderEpoch: 2, Isr: []int32{102}}}}}
	evs = infer(&back, &moved, &seen)
	checkKinds(t, evs, []cluster.EventKind{cluster.EventPartitionChange})
	if evs[0].Node != 102 || !strings.Contains(evs[0].Message, "orders-0: leader 102") {
		t.Errorf("partition change: %+v", evs[0])
	}
}

func checkKinds(t *testing.T, evs []cluster.Event, want []cluster.EventKind) {
	t.Helper()
	var got []cluster.EventKind
	for _, ev := range evs {
		got = append(got, ev.Kind)
		if !ev.Inferred {
			t.Errorf("%s not marked inferred", ev.Kind)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
}
