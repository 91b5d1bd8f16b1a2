package condition

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// dataPlaneView is metadataView with orders-0 led by 101 at high watermark
// 50, its follower 103 at 47 with one fetcher thread lagging 3, and
// orders-1 leaderless.
func dataPlaneView() view.View {
	v := metadataView()
	p := &v.Topics[0].Partitions
	(*p)[0].HighWatermark = 50
	(*p)[0].ReplicaStates = []view.PartitionReplica{
		{Broker: 101, Hosted: true, LogEndOffset: 50, HighWatermark: 50, Leading: true},
		{Broker: 103, Hosted: true, LogEndOffset: 47, HighWatermark: 47},
	}
	(*p)[1].HighWatermark = -1
	(*p)[1].ReplicaStates = []view.PartitionReplica{{Broker: 103, LogEndOffset: -1, HighWatermark: -1}}
	v.Nodes[3].Broker.Fetchers = []view.FetcherThread{}
	v.Nodes[5].Broker.Fetchers = []view.FetcherThread{{Name: "ReplicaFetcherThread-0-101", SourceBroker: 101, Partitions: []view.FetcherPartition{
		{Topic: "orders", Partition: 0, State: view.FetchStateFetching, FetchOffset: 47, Lag: 3, HighWatermark: 50, Truncations: 1},
	}}}
	return v
}

func TestDataPlaneConditions(t *testing.T) {
	v := derived(dataPlaneView(), nil)
	checkConditions(t, &v, []conditionCase{
		{"hwm orders-0 == 50", true, "orders-0: leader 101, leader epoch 2, replicas [101,103], isr [101], hwm 50, log ends 101:50 103:47"},
		{"hwm orders-0 > 50", false, ""},
		{"hwm orders-1 == -1", true, "hwm -1, log ends 103:-"},
		{"log-end orders-0 103 == 47", true, "broker 103 log end 47 (want == 47)"},
		{"log-end orders-0 103 >= 50", false, ""},
		{"log-end orders-1 103 == -1", true, "broker 103 log end -1"},
		{"fetcher-lag 103 == 3", true, "broker 103 max lag 3 (orders-0 on ReplicaFetcherThread-0-101)"},
		{"fetcher-lag 103 == 0", false, ""},
		{"fetcher-lag 101 == 0", true, "broker 101 max lag 0"},
		{"fetcher-lag 102 == 0", false, "broker 102 is killed: no fetchers"},
		{"in-sync orders-0", false, "isr [101]"},
		{"in-sync orders-1", false, "hwm -1"},
		{"truncations orders-0 103 >= 1", true, "broker 103 truncations 1 (want >= 1); orders-0 on ReplicaFetcherThread-0-101: Fetching, fetch offset 47"},
		{"truncations orders-0 101 == 0", true, "no fetcher thread of broker 101 fetches orders-0"},
		// hwm without a partition is still the metadata log's.
		{"hwm == 100", true, "hwm 100"},
	})
}

// A follower that caught up and rejoined the ISR makes the partition in
// sync; one whose fetcher has not heard its leader yet has no lag to judge.
func TestInSyncAndFetcherLagFollowTheFollower(t *testing.T) {
	v := dataPlaneView()
	p := &v.Topics[0].Partitions[0]
	p.Isr = []int32{101, 103}
	p.ReplicaStates[1].LogEndOffset = 50
	v.Nodes[5].Broker.Fetchers[0].Partitions[0].Lag = 0
	v = derived(v, nil)
	for _, cond := range []string{"in-sync orders-0", "fetcher-lag 103 == 0"} {
		c, _ := Parse(cond)
		if ok, saw, err := c.Eval(&v); !ok || err != nil {
			t.Errorf("%s = %v (%s, %v), want true", cond, ok, saw, err)
		}
	}
	v.Nodes[5].Broker.Fetchers[0].Partitions[0].Lag = -1
	c, _ := Parse("fetcher-lag 103 <= 10")
	if ok, saw, _ := c.Eval(&v); ok || !strings.Contains(saw, "1 partition not answered yet") {
		t.Errorf("fetcher-lag before the first answer = %v (%s), want false", ok, saw)
	}
}

func TestDataPlaneConditionsRefuseWhatCannotHold(t *testing.T) {
	v := derived(dataPlaneView(), nil)
	for cond, want := range map[string]string{
		"fetcher-lag 2 == 0":         "node 2 is a controller; fetcher-lag is about brokers",
		"fetcher-lag 999 == 0":       "unknown node",
		"log-end orders-0 999 == 0":  "unknown node",
		"truncations orders-0 1 > 0": "node 1 is a controller",
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

func TestParseDataPlaneConditionErrors(t *testing.T) {
	for in, want := range map[string]string{
		"hwm orders 50 >":              `bad partition "orders"`,
		"hwm orders-0 >= baseline":     "baseline is the metadata log's high watermark",
		"hwm orders-0 ~ 5":             `bad operator "~"`,
		"hwm >":                        "want hwm OP V (the metadata log's) or hwm TOPIC-P OP V",
		"log-end orders-0 == 5":        "want log-end TOPIC-P BROKER OP V",
		"log-end orders-0 leader == 5": `bad broker "leader": want a broker's node ID`,
		"log-end orders-0 102 == five": `bad value "five": want a number`,
		"fetcher-lag 102":              "want fetcher-lag BROKER OP V",
		"fetcher-lag follower == 0":    `bad broker "follower"`,
		"in-sync":                      "want in-sync TOPIC-P",
		"in-sync orders-x":             `"x" is not a partition number`,
		"fetcher-lagg 102 == 0":        "closest form: fetcher-lag BROKER OP V",
		"truncations orders-0 >= 1":    "want truncations TOPIC-P BROKER OP V, e.g. truncations orders-0 102 >= 1",
		"insync orders-0":              "closest form: in-sync TOPIC-P",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", in, err, want)
		}
	}
}
