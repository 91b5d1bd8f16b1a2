package engine_test

import (
	"fmt"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// A push follower more than a controller's request frame (1 MiB) behind
// catches up: the leader's AppendEntries carry at most AppendMaxBytes of
// records, where a push of everything up to FetchMaxBytes (8 MiB) had its
// connection closed by the follower's listener, again and again.
func TestPushFollowerCatchesUpFromFarBehind(t *testing.T) {
	p := openMode(t, "push")
	v := waitCond(t, p, "caught-up")
	behind := v.Nodes[0].ID
	if behind == v.LeaderID {
		behind = v.Nodes[1].ID
	}
	do(t, p, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(behind)})
	hwm := p.View().HighWatermark
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 2000, RecordBytes: 1000})
	// 3000 records of 1000 B: about 3 MiB the follower lacks.
	waitView(t, p, "3 MB committed without it", func(v *view.View) bool { return v.HighWatermark >= hwm+3000 })
	do(t, p, cluster.Action{Kind: cluster.ActLoad})
	do(t, p, cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(behind)})
	target := p.View().HighWatermark
	waitView(t, p, fmt.Sprintf("node %d caught up to offset %d", behind, target), func(v *view.View) bool {
		n, ok := v.Node(behind)
		return ok && n.LogEndOffset >= target
	})
}
