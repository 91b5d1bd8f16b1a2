package condition

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The evaluators of the conditions on the metadata quorum and its nodes.

func leaderKnown(_ Condition, v *view.View) (bool, string, error) {
	return v.LeaderID != view.NoLeader, v.Summary(), nil
}

func leaderIs(c Condition, v *view.View) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	return v.LeaderID != view.NoLeader && c.op.holds(int64(v.LeaderID), int64(id)), v.Summary(), nil
}

func newLeader(_ Condition, v *view.View) (bool, string, error) {
	if v.Baseline == nil {
		return false, "", fmt.Errorf("%w: new-leader compares with the epoch before the last kill, stop, isolate, resign, wipe, disk or mark", ErrNoBaseline)
	}
	saw := fmt.Sprintf("%s; baseline epoch %d (before %s of node %d)", v.Summary(), v.Baseline.LeaderEpoch, v.Baseline.Action, v.Baseline.NodeID)
	return v.LeaderID != view.NoLeader && v.LeaderEpoch > v.Baseline.LeaderEpoch, saw, nil
}

func leaderEpoch(v *view.View) int64 { return int64(v.LeaderEpoch) }
func leaderHWM(v *view.View) int64   { return v.HighWatermark }

// leaderValue compares a value of the leader's, have, with V; base is
// the baseline's value of it.
func leaderValue(have func(*view.View) int64, base func(*view.Baseline) int64) evalFunc {
	return func(c Condition, v *view.View) (bool, string, error) {
		if v.LeaderID == view.NoLeader {
			return false, v.Summary(), nil
		}
		want, err := c.want(v, base)
		if err != nil {
			return false, "", err
		}
		h := have(v)
		return c.op.holds(h, want), fmt.Sprintf("%s %d (want %s %d); %s", c.form.word, h, c.op, want, v.Summary()), nil
	}
}

// caughtUp checks every running voter and broker against the leader's log
// end offset, and every unfenced broker's metadata lag.
func caughtUp(_ Condition, v *view.View) (bool, string, error) {
	leader, ok := v.Leader()
	if !ok {
		return false, v.Summary(), nil
	}
	var behind []string
	voters, brokers := 0, 0
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.State != view.StateRunning {
			continue
		}
		if n.Kind == view.KindController {
			voters++
		} else {
			brokers++
		}
		if n.LogEndOffset < leader.LogEndOffset {
			behind = append(behind, fmt.Sprintf("node %d at %d", n.ID, n.LogEndOffset))
		} else if b := n.Broker; b != nil && b.Registered && !b.Fenced && b.MetadataLag != 0 {
			behind = append(behind, fmt.Sprintf("broker %d has not applied %s", n.ID, lagWords(b.MetadataLag)))
		}
	}
	if len(behind) > 0 {
		return false, fmt.Sprintf("leader %d log end %d; behind: %s", leader.ID, leader.LogEndOffset, strings.Join(behind, ", ")), nil
	}
	return true, fmt.Sprintf("%d running voters and %d brokers at leader %d's log end %d", voters, brokers, leader.ID, leader.LogEndOffset), nil
}

// onNode evaluates f on the node c names. A leader or follower that is
// not there yet is something to wait for, not an error.
func onNode(f func(Condition, *view.View, *view.Node) (bool, string, error)) evalFunc {
	return func(c Condition, v *view.View) (bool, string, error) {
		id, err := c.node.Resolve(v)
		if errors.Is(err, ErrNoLeader) && c.node.IsLeader() {
			return false, v.Summary(), nil
		}
		if (errors.Is(err, ErrNoLeader) || errors.Is(err, ErrNoFollower)) && c.node.IsFollower() {
			return false, fmt.Sprintf("no follower yet: %s", v.Summary()), nil // a wait waits for one
		}
		if err != nil {
			return false, "", err
		}
		n, _ := v.Node(id)
		return f(c, v, n)
	}
}

func nodeRole(c Condition, _ *view.View, n *view.Node) (bool, string, error) {
	return c.is(string(n.Role)), n.Summary(), nil
}

func nodeState(c Condition, _ *view.View, n *view.Node) (bool, string, error) {
	return c.is(string(n.State)), n.Summary(), nil
}

func compareNodeField(c Condition, v *view.View, n *view.Node) (bool, string, error) {
	f := fieldNamed(c.field)
	have, ok := f.get(v, n)
	if !ok {
		return false, fmt.Sprintf("node %d has no %s: %s", n.ID, f.name, v.Summary()), nil
	}
	want, err := c.want(v, f.baseline)
	if err != nil {
		return false, "", err
	}
	return c.op.holds(have, want), fmt.Sprintf("node %d %s %d (want %s %d); %s", n.ID, f.name, have, c.op, want, n.Summary()), nil
}

// A nodeField is a number of a node's that node NODE FIELD OP V compares.
type nodeField struct {
	name     string
	get      func(v *view.View, n *view.Node) (int64, bool)
	baseline func(*view.Baseline) int64 // the baseline's value of it; nil if it records none
}

// of reads a field every node has.
func of(get func(*view.Node) int64) func(*view.View, *view.Node) (int64, bool) {
	return func(_ *view.View, n *view.Node) (int64, bool) { return get(n), true }
}

var nodeFields = []nodeField{
	{"epoch", of(func(n *view.Node) int64 { return int64(n.Epoch) }), baseEpoch},
	{"log-end", of(func(n *view.Node) int64 { return n.LogEndOffset }), baseHWM},
	{"hwm", of(func(n *view.Node) int64 { return n.HighWatermark }), baseHWM},
	{"log-start", of(func(n *view.Node) int64 { return n.LogStartOffset }), nil},
	{"lag", func(v *view.View, n *view.Node) (int64, bool) { r, ok := v.Replica(n.ID); return r.Lag, ok }, nil},
	{"truncations", of(func(n *view.Node) int64 { return n.Truncations }), nil},
	{"snapshots-loaded", of(func(n *view.Node) int64 { return n.SnapshotsLoaded }), nil},
}

func fieldNames() []string {
	names := make([]string, len(nodeFields))
	for i, f := range nodeFields {
		names[i] = f.name
	}
	return names
}

// fieldNamed returns the field name, which parsing checked.
func fieldNamed(name string) nodeField {
	return nodeFields[slices.IndexFunc(nodeFields, func(f nodeField) bool { return f.name == name })]
}

// votersCount compares the size of the leader's voter set with N.
func votersCount(c Condition, v *view.View) (bool, string, error) {
	if v.LeaderID == view.NoLeader {
		return false, v.Summary(), nil
	}
	h := int64(len(v.CurrentVoters))
	return c.op.holds(h, c.value.n), fmt.Sprintf("voters %d (want %s %d); %s", h, c.op, c.value.n, v.Summary()), nil
}

// isVoter reports whether node NODE is in the leader's voter set.
func isVoter(c Condition, v *view.View) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	if v.LeaderID == view.NoLeader {
		return false, v.Summary(), nil
	}
	for _, r := range v.CurrentVoters {
		if r.NodeID == id {
			return true, v.Summary(), nil
		}
	}
	return false, fmt.Sprintf("node %d is not a voter; %s", id, v.Summary()), nil
}
