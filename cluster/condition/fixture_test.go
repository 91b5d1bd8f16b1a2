package condition

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// A fixture of the view package's tests, for conditions to evaluate.

var testNow = time.UnixMilli(1_700_000_000_000)

// engineView is what an engine might report: controllers 1-3 with 2 leading
// epoch 5, brokers 101 and 102 observing.
func engineView() view.View {
	ts := testNow.UnixMilli()
	return view.View{
		ClusterID: "abc",
		Timestamp: ts,
		Nodes: []view.Node{
			{ID: 3, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower, Epoch: 5, LeaderID: 2, VotedID: 2, LogEndOffset: 95, HighWatermark: 95},
			{ID: 1, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower, Epoch: 5, LeaderID: 2, VotedID: 2, LogEndOffset: 100, HighWatermark: 100},
			{ID: 2, Kind: view.KindController, State: view.StateRunning, Role: view.RoleLeader, Epoch: 5, LeaderID: 2, VotedID: 2, LogEndOffset: 100, HighWatermark: 100,
				Replicas: []view.Replica{
					{NodeID: 1, LogEndOffset: 100, LastFetchTimestamp: ts - 10, LastCaughtUpTimestamp: ts - 10, ParkedFetch: true},
					{NodeID: 3, LogEndOffset: 95, LastFetchTimestamp: ts - 20, LastCaughtUpTimestamp: ts - 700},
					{NodeID: 101, LogEndOffset: 100, LastFetchTimestamp: ts - 5, LastCaughtUpTimestamp: ts - 5},
				}},
			{ID: 101, Kind: view.KindBroker, State: view.StateRunning, Role: view.RoleObserver, Epoch: 5, LeaderID: 2, VotedID: -1, LogEndOffset: 100, HighWatermark: 100},
			{ID: 102, Kind: view.KindBroker, State: view.StateKilled, Epoch: 4, LeaderID: 1, VotedID: -1, LogEndOffset: 60, HighWatermark: 60},
		},
	}
}

func derived(v view.View, b *view.Baseline) view.View {
	v.Derive(testNow, b)
	return v
}

// conditionCase is a condition, whether it holds on a view, and what
// its saw must contain.
type conditionCase struct {
	cond string
	want bool
	saw  string
}

// checkConditions parses each case's condition, checks that its
// canonical form parses back to it, and evaluates it on v.
func checkConditions(t *testing.T, v *view.View, cases []conditionCase) {
	t.Helper()
	for _, tc := range cases {
		c, err := Parse(tc.cond)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.cond, err)
		}
		if again, err := Parse(c.String()); err != nil || again != c {
			t.Errorf("%q: canonical form %q does not parse back: %v", tc.cond, c, err)
		}
		ok, saw, err := c.Eval(v)
		if err != nil {
			t.Errorf("%s: %v", tc.cond, err)
			continue
		}
		if ok != tc.want || !strings.Contains(saw, tc.saw) {
			t.Errorf("%s = %v (%s), want %v with %q", tc.cond, ok, saw, tc.want, tc.saw)
		}
	}
}
