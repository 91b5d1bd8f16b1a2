package view

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var testNow = time.UnixMilli(1_700_000_000_000)

// engineView is what an engine might report: controllers 1-3 with 2 leading
// epoch 5, brokers 101 and 102 observing.
func engineView() View {
	ts := testNow.UnixMilli()
	return View{
		ClusterID: "abc",
		Timestamp: ts,
		Nodes: []Node{
			{ID: 3, Kind: KindController, State: StateRunning, Role: RoleFollower, Epoch: 5, LeaderID: 2, VotedID: 2, LogEndOffset: 95, HighWatermark: 95},
			{ID: 1, Kind: KindController, State: StateRunning, Role: RoleFollower, Epoch: 5, LeaderID: 2, VotedID: 2, LogEndOffset: 100, HighWatermark: 100},
			{ID: 2, Kind: KindController, State: StateRunning, Role: RoleLeader, Epoch: 5, LeaderID: 2, VotedID: 2, LogEndOffset: 100, HighWatermark: 100,
				Replicas: []Replica{
					{NodeID: 1, LogEndOffset: 100, LastFetchTimestamp: ts - 10, LastCaughtUpTimestamp: ts - 10, ParkedFetch: true},
					{NodeID: 3, LogEndOffset: 95, LastFetchTimestamp: ts - 20, LastCaughtUpTimestamp: ts - 700},
					{NodeID: 101, LogEndOffset: 100, LastFetchTimestamp: ts - 5, LastCaughtUpTimestamp: ts - 5},
				}},
			{ID: 101, Kind: KindBroker, State: StateRunning, Role: RoleObserver, Epoch: 5, LeaderID: 2, VotedID: -1, LogEndOffset: 100, HighWatermark: 100},
			{ID: 102, Kind: KindBroker, State: StateKilled, Epoch: 4, LeaderID: 1, VotedID: -1, LogEndOffset: 60, HighWatermark: 60},
		},
	}
}

func derived(v View, b *Baseline) View {
	v.Derive(testNow, b)
	return v
}

func TestDeriveQuorumSummary(t *testing.T) {
	v := derived(engineView(), nil)
	if v.LeaderID != 2 || v.LeaderEpoch != 5 || v.HighWatermark != 100 {
		t.Fatalf("leader %d epoch %d hwm %d", v.LeaderID, v.LeaderEpoch, v.HighWatermark)
	}
	for i, n := range v.Nodes {
		if i > 0 && v.Nodes[i-1].ID >= n.ID {
			t.Errorf("nodes not ordered: %v", v.NodeIDs())
		}
	}
	var order []int32
	for _, r := range v.CurrentVoters {
		order = append(order, r.NodeID)
	}
	if len(order) != 3 || order[0] != 2 || order[1] != 1 || order[2] != 3 {
		t.Errorf("voters ordered %v, want leader first then followers: [2 1 3]", order)
	}
	lead := v.CurrentVoters[0]
	if lead.Status != StatusLeader || lead.LastFetchTimestamp != v.Timestamp || lead.Lag != 0 || lead.LogEndOffset != 100 {
		t.Errorf("leader replica %+v", lead)
	}
	r3, _ := v.Replica(3)
	if r3.Status != StatusFollower || r3.Lag != 5 || r3.State != StateRunning {
		t.Errorf("replica 3 %+v", r3)
	}
	if len(v.CurrentObservers) != 1 || v.CurrentObservers[0].NodeID != 101 || v.CurrentObservers[0].Status != StatusObserver {
		t.Errorf("observers %+v (102 was never heard of by the leader and is left out)", v.CurrentObservers)
	}
	if v.MaxFollowerLag != 5 || v.MaxFollowerLagTimeMs != 700 {
		t.Errorf("max follower lag %d, time %d; want 5, 700", v.MaxFollowerLag, v.MaxFollowerLagTimeMs)
	}
}

func TestDeriveWithoutLeader(t *testing.T) {
	v := engineView()
	v.Nodes[2].Role = RoleCandidate
	v = derived(v, nil)
	if v.LeaderID != NoLeader || v.LeaderEpoch != NoLeader || v.HighWatermark != -1 {
		t.Errorf("no leader: %d %d %d", v.LeaderID, v.LeaderEpoch, v.HighWatermark)
	}
	b, _ := json.Marshal(v)
	for _, want := range []string{`"currentVoters":[]`, `"currentObservers":[]`, `"baseline":null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

func TestDerivePicksLeaderOfHighestEpoch(t *testing.T) {
	v := engineView()
	// Node 3, cut off, still believes it leads epoch 4.
	v.Nodes[0].Role, v.Nodes[0].Epoch, v.Nodes[0].LeaderID = RoleLeader, 4, 3
	v = derived(v, nil)
	if v.LeaderID != 2 || v.LeaderEpoch != 5 {
		t.Errorf("leader %d epoch %d; want 2 in 5", v.LeaderID, v.LeaderEpoch)
	}
	// A killed node's stale role does not count.
	v = engineView()
	v.Nodes[4].Role, v.Nodes[4].Epoch = RoleLeader, 9
	v = derived(v, nil)
	if v.LeaderID != 2 {
		t.Errorf("killed node chosen as leader: %d", v.LeaderID)
	}
}

func TestDeriveIsolatedState(t *testing.T) {
	v := engineView()
	for _, p := range []int32{1, 2, 101, 102} {
		v.Links = append(v.Links, Link{From: 3, To: p, Down: true}, Link{From: p, To: 3, Down: true})
	}
	d := derived(v, nil)
	n3, _ := d.Node(3)
	if n3.State != StateIsolated {
		t.Errorf("node 3 state %s, want isolated", n3.State)
	}
	if r, _ := d.Replica(3); r.State != StateIsolated {
		t.Errorf("replica 3 state %s", r.State)
	}
	// One link back up: no longer isolated, only partitioned.
	v.Links = v.Links[1:]
	d = derived(v, nil)
	if n3, _ := d.Node(3); n3.State != StateRunning {
		t.Errorf("node 3 state %s, want running", n3.State)
	}
	// A one-node playground has nothing to be isolated from.
	one := View{Nodes: []Node{{ID: 1, Kind: KindController, State: StateRunning, Role: RoleLeader}}}
	one.Derive(testNow, nil)
	if one.Nodes[0].State != StateRunning {
		t.Errorf("single node state %s", one.Nodes[0].State)
	}
}

func TestDeriveFillsUnheardVoters(t *testing.T) {
	v := engineView()
	v.Nodes[2].Replicas = nil // a brand-new leader has heard from nobody yet
	d := derived(v, nil)
	r1, ok := d.Replica(1)
	if !ok || r1.LogEndOffset != -1 || r1.LastFetchTimestamp != -1 || r1.Lag != 101 {
		t.Errorf("unheard voter %+v (Kafka prints LEO -1 and lag LEO+1)", r1)
	}
	if d.MaxFollowerLagTimeMs != -1 {
		t.Errorf("lag time with unknown timestamps = %d, want -1", d.MaxFollowerLagTimeMs)
	}
}

func TestMaxFollowerLag(t *testing.T) {
	r := func(id int32, leo, caught int64) Replica {
		return Replica{NodeID: id, LogEndOffset: leo, LastCaughtUpTimestamp: caught}
	}
	cases := []struct {
		name           string
		leader         int32
		voters         []Replica
		lag, lagTimeMs int64
	}{
		// Ties go to the lowest id, as Kafka's tool picks them: here the
		// leader's last caught-up time minus voter 1's.
		{"all caught up: the lowest id counts as laggiest", 2, []Replica{r(2, 10, 1000), r(1, 10, 990), r(3, 10, 995)}, 0, 10},
		{"all caught up, the leader lowest", 1, []Replica{r(1, 10, 1000), r(2, 10, 990), r(3, 10, 995)}, 0, 0},
		{"one behind", 2, []Replica{r(2, 10, 1000), r(1, 10, 990), r(3, 7, 400)}, 3, 600},
		{"leader listed last", 2, []Replica{r(1, 10, 990), r(3, 7, 400), r(2, 10, 1000)}, 3, 600},
		{"unknown caught-up time", 2, []Replica{r(2, 10, 1000), r(3, -1, -1)}, 11, -1},
		{"no leader among voters", 2, []Replica{r(1, 10, 1)}, 0, -1},
	}
	for _, tc := range cases {
		if got := MaxFollowerLag(tc.leader, tc.voters); got != tc.lag {
			t.Errorf("%s: MaxFollowerLag = %d, want %d", tc.name, got, tc.lag)
		}
		if got := MaxFollowerLagTimeMs(tc.leader, tc.voters); got != tc.lagTimeMs {
			t.Errorf("%s: MaxFollowerLagTimeMs = %d, want %d", tc.name, got, tc.lagTimeMs)
		}
	}
}

func TestViewJSONNames(t *testing.T) {
	v := derived(engineView(), &Baseline{Action: "kill", NodeID: 1, LeaderID: 1, LeaderEpoch: 4})
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"clusterId", "leaderId", "leaderEpoch", "highWatermark", "maxFollowerLag",
		"maxFollowerLagTimeMs", "currentVoters", "currentObservers", "nodeId", "logEndOffset", "lag",
		"lastFetchTimestamp", "lastCaughtUpTimestamp", "status", "state", "parkedFetch", "baseline",
		"nodes", "links", "kind", "listener", "role", "epoch", "votedId", "logStartOffset", "latestSnapshot"} {
		if !strings.Contains(string(b), `"`+name+`":`) {
			t.Errorf("status JSON lacks %q", name)
		}
	}
	var back View
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.LeaderID != 2 || back.Baseline.LeaderEpoch != 4 || len(back.Nodes) != 5 {
		t.Errorf("round trip lost data: %+v", back)
	}
}
