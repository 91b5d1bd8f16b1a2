package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// brokersView has broker 101 running and caught up, 102 fenced and behind,
// 103 killed, and a topic that 102 has not applied yet.
func brokersView(now int64) view.View {
	v := threeVoters(now)
	v.Nodes = append(v.Nodes,
		view.Node{ID: 101, Kind: view.KindBroker, State: view.StateRunning, Broker: &view.Broker{State: view.BrokerRunning, BrokerEpoch: 12, Registered: true, MetadataLag: 0, LastHeartbeatTimestamp: now - 150},
			Metadata: &view.Metadata{LastAppliedRecordOffset: 120, LastChange: &view.MetadataChange{Offset: 118, What: "topic orders created", AppliedAfterUs: 1250}}},
		view.Node{ID: 102, Kind: view.KindBroker, State: view.StateRunning, Broker: &view.Broker{State: view.BrokerRecovery, BrokerEpoch: 14, Registered: true, Fenced: true, MetadataLag: 37, LastHeartbeatTimestamp: now - 12_000},
			Metadata: &view.Metadata{LastAppliedRecordOffset: 83, LastChange: &view.MetadataChange{Offset: 15, What: "broker 102 registered"}}},
		view.Node{ID: 103, Kind: view.KindBroker, State: view.StateKilled, Broker: &view.Broker{BrokerEpoch: 16, Registered: true, Fenced: true, MetadataLag: -1, LastHeartbeatTimestamp: -1}},
	)
	v.Topics = []view.Topic{{Name: "orders", OnBrokers: []int32{101}, Partitions: []view.Partition{
		{Partition: 0, Leader: 101, Replicas: []int32{101, 102}, Isr: []int32{101}},
		{Partition: 1, Leader: 101, Replicas: []int32{102, 101}, Isr: []int32{101}},
	}}}
	v.Derive(time.UnixMilli(now), nil)
	return v
}

func TestBrokersPanelShowsFencingLagAndTopics(t *testing.T) {
	v := brokersView(1_000_000)
	out := ansi.Strip(strings.Join(brokersModel{}.view(DefaultStyles(), &v, 80, 10), "\n"))
	for _, want := range []string{
		"Brokers: lifecycle, fencing, LAG* (kraftlab's own)",
		"  ID  STATE     FENCED     LAG*  HEARTBEAT",
		"last change: topic orders created (offset 118)",
		" 101  RUNNING   no            0  150ms ago      2  after 1.2ms",
		" 102  RECOVERY  yes          37  12.0s ago      0  not yet",
		" 103  killed    yes           -  never          0  -",
		"topic orders: 2 partitions, not yet on 102",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("brokers panel lacks %q:\n%s", want, out)
		}
	}
	// Too short for every broker and the topics: it says what it left out.
	short := ansi.Strip(strings.Join(brokersModel{}.view(DefaultStyles(), &v, 80, 4), "\n"))
	if !strings.Contains(short, "… 2 more brokers") {
		t.Errorf("a short brokers panel does not say what it hides:\n%s", short)
	}
}

// The topic key creates the next free topic-N with as many replicas as
// unfenced brokers, up to three.
func TestTopicKeyAction(t *testing.T) {
	v := brokersView(1_000_000)
	a := newTopicAction(&v)
	if a.Kind != cluster.ActCreateTopic || a.Topic != "topic-2" || a.Partitions != 3 || a.ReplicationFactor != 1 {
		t.Fatalf("topic key action = %+v, want topic-2 with 3 partitions and 1 replica (one unfenced broker)", a)
	}
}
