package condition

import (
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// The evaluators of the conditions on consumer groups, as the brokers
// coordinating them hold them. A group no running broker serves yet (no
// member joined or committed, or its new coordinator is still loading
// it) is something to wait for, not an error: any client may make one.

// groupName is the G of the group conditions.
var groupName = arg{help: "G", usage: "GROUP",
	parse: func(c *Condition, s string) error { c.field = s; return nil },
	spell: func(c Condition) string { return c.field }}

// onGroup evaluates f on the group c names, once a broker serves it.
func onGroup(f func(Condition, *view.View, *view.Group) (bool, string, error)) evalFunc {
	return func(c Condition, v *view.View) (bool, string, error) {
		g, ok := v.Group(c.field)
		if !ok {
			return false, noGroup(v, c.field), nil
		}
		return f(c, v, g)
	}
}

func noGroup(v *view.View, id string) string {
	if len(v.Groups) == 0 {
		return fmt.Sprintf("no running broker serves group %s yet (no consumer groups are served)", id)
	}
	ids := make([]string, len(v.Groups))
	for i := range v.Groups {
		ids[i] = v.Groups[i].ID
	}
	return fmt.Sprintf("no running broker serves group %s yet (groups served: %s)", id, strings.Join(ids, ", "))
}

func groupStable(_ Condition, _ *view.View, g *view.Group) (bool, string, error) {
	return g.State == view.GroupStable, groupSummary(g), nil
}

// groupLag compares the sum of the lags of the group's committed
// offsets; it does not hold while a partition's lag is unknown (no
// running broker leads it).
func groupLag(c Condition, _ *view.View, g *view.Group) (bool, string, error) {
	lag, known := g.TotalLag()
	saw := groupSummary(g)
	if !known {
		return false, saw + "; a partition's high watermark is unknown (no running leader)", nil
	}
	return c.op.holds(lag, c.value.n), saw, nil
}

func groupMembers(c Condition, _ *view.View, g *view.Group) (bool, string, error) {
	return c.op.holds(int64(len(g.Members)), c.value.n), groupSummary(g), nil
}

// groupCoordinator compares the broker that serves the group, as loaded,
// with N: unlike coordinator-of:G, which names the leader of the group's
// partition at once, it changes only once the new leader has read the
// group back from __consumer_offsets.
func groupCoordinator(c Condition, v *view.View, g *view.Group) (bool, string, error) {
	id, err := c.node.Resolve(v)
	if err != nil {
		return false, "", err
	}
	return (g.Coordinator == id) == (c.op == opEq), groupSummary(g), nil
}

// groupSummary is one line about a group.
func groupSummary(g *view.Group) string {
	lag := "unknown"
	if l, known := g.TotalLag(); known {
		lag = fmt.Sprint(l)
	}
	return fmt.Sprintf("group %s %s, generation %d, %d members, coordinator %d (%s-%d), lag %s",
		g.ID, g.State, g.Generation, len(g.Members), g.Coordinator, view.OffsetsTopic, g.OffsetsPartition, lag)
}
