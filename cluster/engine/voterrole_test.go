package engine_test

import (
	"fmt"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// A controller outside a dynamic quorum's voter set follows the leader
// as an Observer, as Kafka's current-state says: one started only as an
// observer, and one removed from the voters; a voter follows as a
// Follower.
func TestControllerOutsideTheVotersIsAnObserver(t *testing.T) {
	cfg, err := cluster.NewConfig(1, 0, cluster.ProfileFast, []string{"kraft.version=1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := openWith(t, cfg)
	waitCond(t, p, "leader")
	role := func(id int32, want view.Role) {
		t.Helper()
		waitView(t, p, fmt.Sprintf("node %d %s", id, want), func(v *view.View) bool {
			n, ok := v.Node(id)
			return ok && n.Role == want && n.RaftMetrics != nil && n.RaftMetrics.CurrentState == map[view.Role]string{
				view.RoleObserver: "observer", view.RoleFollower: "follower"}[want]
		})
	}
	observer := do(t, p, cluster.Action{Kind: cluster.ActAddController, Observer: true}).Nodes[0]
	role(observer, view.RoleObserver)
	voter := do(t, p, cluster.Action{Kind: cluster.ActAddController}).Nodes[0]
	role(voter, view.RoleFollower)
	role(observer, view.RoleObserver)
	do(t, p, cluster.Action{Kind: cluster.ActRemoveController, Node: condition.NodeID(voter)})
	role(voter, view.RoleObserver)
}
