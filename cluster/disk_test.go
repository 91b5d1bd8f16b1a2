package cluster_test

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
)

// disk slows one node's disk: the view shows the delay, the baseline
// names the node as target, the event stream says what changed, and the
// action spells itself as its CLI line.
func TestDiskAction(t *testing.T) {
	p, _ := open(t, 3, 0)
	a := cluster.Action{Kind: cluster.ActDisk, Node: ref("follower"), DelayMs: 120}
	if got := a.String(); got != "disk follower --delay 120ms" {
		t.Errorf("String() = %q", got)
	}
	res := do(t, p, a)
	if len(res.Nodes) != 1 {
		t.Fatalf("disk resolved to %v", res.Nodes)
	}
	id := res.Nodes[0]
	v := p.View()
	if n, _ := v.Node(id); n.DiskDelayMs != 120 {
		t.Errorf("node %d's disk delay in the view: %d ms", id, n.DiskDelayMs)
	}
	if v.Baseline == nil || v.Baseline.Action != "disk" || v.Baseline.NodeID != id {
		t.Errorf("baseline %+v, want disk of node %d", v.Baseline, id)
	}
	res = do(t, p, cluster.Action{Kind: cluster.ActDisk, Node: ref("target"), DelayMs: 300})
	if res.Message == "" || res.Nodes[0] != id {
		t.Errorf("disk target = %+v", res)
	}
	do(t, p, cluster.Action{Kind: cluster.ActDisk, Node: ref("target")})
	var msgs []string
	for _, ev := range p.EventStream().Since(0) {
		if ev.Kind == cluster.EventDisk {
			if ev.Node != id {
				t.Errorf("disk event of node %d, want %d", ev.Node, id)
			}
			msgs = append(msgs, ev.Message)
		}
	}
	want := []string{"is slow", "now takes 300ms longer for every write and fsync (was 120ms)", "is normal again (every write and fsync took 300ms longer)"}
	if len(msgs) != len(want) {
		t.Fatalf("disk events %q", msgs)
	}
	for i, w := range want {
		if !strings.Contains(msgs[i], w) {
			t.Errorf("disk event %d: %q, want it to say %q", i, msgs[i], w)
		}
	}
	v = p.View()
	if n, _ := v.Node(id); n.DiskDelayMs != 0 {
		t.Errorf("after delay 0 node %d's view says %d ms", id, n.DiskDelayMs)
	}
}
