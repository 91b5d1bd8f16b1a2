package condition

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// metadataView is engineView with broker 101 registered, unfenced and caught
// up, broker 103 fenced and behind, and a topic orders with two partitions.
func metadataView() view.View {
	v := engineView()
	v.Nodes[3].Broker = &view.Broker{State: view.BrokerRunning, BrokerEpoch: 10, Registered: true, MetadataLag: 0, LastHeartbeatTimestamp: testNow.UnixMilli()}
	v.Nodes = append(v.Nodes, view.Node{ID: 103, Kind: view.KindBroker, State: view.StateRunning, Role: view.RoleObserver, Epoch: 5, LeaderID: 2, LogEndOffset: 100, HighWatermark: 100,
		Broker: &view.Broker{State: view.BrokerRecovery, BrokerEpoch: 12, Registered: true, Fenced: true, MetadataLag: 7, LastHeartbeatTimestamp: -1}})
	v.Topics = []view.Topic{{Name: "orders", ID: "x", OnBrokers: []int32{101}, Partitions: []view.Partition{
		{Partition: 0, Leader: 101, LeaderEpoch: 2, Replicas: []int32{101, 103}, Isr: []int32{101}},
		{Partition: 1, Leader: view.NoLeader, LeaderEpoch: 3, Replicas: []int32{103, 101}, Isr: []int32{103}, AddingReplicas: []int32{103}, RemovingReplicas: []int32{101}},
	}}}
	return v
}

func TestMetadataConditions(t *testing.T) {
	v := derived(metadataView(), nil)
	checkConditions(t, &v, []conditionCase{
		{"fenced 103", true, "broker 103 RECOVERY, fenced, metadata lag 7"},
		{"fenced 101", false, "broker 101 RUNNING, unfenced"},
		{"unfenced 101", true, ""},
		{"unfenced 103", false, ""},
		{"broker 101 state running", true, ""},
		{"broker 103 state != RUNNING", true, ""},
		{"metadata-lag 101 == 0", true, "metadata lag 0"},
		{"metadata-lag 103 <= 5", false, "metadata lag 7"},
		{"topic orders on all brokers", false, "not yet on brokers 103"},
		{"partition-leader orders-0 == 101", true, "leader 101, leader epoch 2"},
		{"partition-leader orders-0 != 101", false, ""},
		{"partition-leader orders-1 != 101", true, "leader none"},
		{"isr orders-0 size >= 1", true, "isr [101]"},
		{"isr orders-0 size >= 2", false, ""},
		{"reassigned orders-0", true, "replicas [101,103], isr [101]"},
		{"reassigned orders-1", false, "reassigning: adding [103], removing [101]"},
		{"caught-up", false, "node 3 at 95"},
	})
}

// An unfenced broker that has not applied all committed metadata is not
// caught up, even at the leader's log end; a fenced one does not count.
func TestCaughtUpWaitsForUnfencedBrokersMetadata(t *testing.T) {
	v := metadataView()
	v.Nodes[0].LogEndOffset = 100
	v.Nodes[3].Broker.MetadataLag = 2
	v = derived(v, nil)
	c, _ := Parse("caught-up")
	if ok, saw, _ := c.Eval(&v); ok || !strings.Contains(saw, "broker 101 has not applied the last 2 committed offsets") {
		t.Fatalf("caught-up = %v (%s), want false naming broker 101", ok, saw)
	}
	v.Nodes[3].Broker.MetadataLag = 0
	if ok, saw, _ := c.Eval(&v); !ok {
		t.Fatalf("caught-up = false (%s) with broker 103 fenced and 101 at lag 0", saw)
	}
}

func TestMetadataConditionsRefuseWhatCannotHold(t *testing.T) {
	v := derived(metadataView(), nil)
	for cond, want := range map[string]string{
		"fenced 2":                         "node 2 is a controller; fenced is about brokers",
		"metadata-lag 1 == 0":              "node 1 is a controller",
		"unfenced 999":                     "unknown node",
		"partition-leader orders-0 == 999": "unknown node",
		"topic nope on all brokers":        `unknown topic "nope" (topics: orders)`,
		"partition-leader orders-9 != 101": "unknown partition orders-9 (topic orders has partitions 0..1)",
		"in-sync nope-0":                   `unknown topic "nope" (topics: orders)`,
		"hwm orders-2 >= 0":                "unknown partition orders-2",
	} {
		c, err := Parse(cond)
		if err != nil {
			t.Fatalf("Parse(%q): %v", cond, err)
		}
		if _, _, err := c.Eval(&v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", cond, err, want)
		}
	}
}

// Without a leader the topics may be out of reach, not gone: a missing
// topic is a condition that does not hold yet, for wait to wait on.
func TestUnknownTopicWithoutLeaderIsNotAnError(t *testing.T) {
	v := derived(metadataView(), nil)
	v.LeaderID = view.NoLeader
	v.Topics = nil
	for cond, want := range map[string]string{
		"topic orders on all brokers": `no topic "orders" in the committed metadata (no leader to serve it)`,
		"in-sync orders-0":            "no partition orders-0 in the committed metadata (no leader to serve it)",
	} {
		c, err := Parse(cond)
		if err != nil {
			t.Fatal(err)
		}
		if ok, saw, err := c.Eval(&v); ok || err != nil || saw != want {
			t.Errorf("%s = %v, %q, %v; want false, %q", cond, ok, saw, err, want)
		}
	}
}

func TestParseMetadataConditionErrors(t *testing.T) {
	for in, want := range map[string]string{
		"fenced":                         "want fenced NODE",
		"fenced x":                       `bad node "x"`,
		"broker 101 state FLYING":        `unknown broker state "FLYING"`,
		"broker 101 role RUNNING":        "want broker NODE state",
		"metadata-lag 101 <= baseline":   "baseline only compares",
		"topic orders on some brokers":   "want topic T on all brokers",
		"partition-leader orders 101":    "want partition-leader",
		"partition-leader orders != 101": "bad partition \"orders\"",
		"partition-leader orders-0 > 1":  `bad operator ">"`,
		"isr orders-x size >= 2":         `"x" is not a partition number`,
		"isr orders-0 length >= 2":       "want isr TOPIC-P size OP V",
		"fencd 101":                      "closest form: fenced NODE",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", in, err, want)
		}
	}
}
