package engine_test

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The background load's records are metadata every node's loader applies:
// the view shows each running node's loader at the high watermark with no
// load error, and a node restarted after a snapshot tells, in the event
// log, that it loaded the snapshot and replayed the tail.
func TestRealEngineLoadersApplyTheLoad(t *testing.T) {
	p := openReal(t, 3, 1, "")
	waitCond(t, p, "caught-up")
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 500, RecordBytes: 100})
	waitView(t, p, "200 load records committed", func(v *view.View) bool { return v.Load.Committed >= 200 })
	res := act(t, p, "snapshot 2")
	if res.Snapshot == nil {
		t.Fatalf("snapshot: %+v", res)
	}
	act(t, p, "kill 2")
	v := waitView(t, p, "more load committed", func(v *view.View) bool { return v.Load.Committed >= 400 })
	act(t, p, "start 2")
	do(t, p, cluster.Action{Kind: cluster.ActLoad})
	waitView(t, p, "the appends in flight to finish", func(v *view.View) bool { return v.Load.InFlight == 0 })
	hwm := p.View().HighWatermark
	v = waitView(t, p, "every loader at the high watermark", func(v *view.View) bool {
		for _, n := range v.Nodes {
			if n.Metadata == nil || n.Metadata.LastAppliedRecordOffset < hwm-1 {
				return false
			}
		}
		return true
	})
	for _, n := range v.Nodes {
		if m := n.Metadata; m.MetadataLoadErrorCount != 0 || m.LoadError != "" || m.LastAppliedRecordTimestamp <= 0 {
			t.Errorf("node %d's loader: %+v", n.ID, m)
		}
	}
	if n, _ := v.Node(2); n.Metadata.HandleLoadSnapshotCount != 1 {
		t.Errorf("restarted node 2's loader: %+v", n.Metadata)
	}
	found := false
	for _, ev := range p.EventStream().Since(0) {
		if ev.Node == 2 && ev.Kind == cluster.EventSnapshotLoaded && strings.Contains(ev.Message, "loaded snapshot "+res.Snapshot.String()) &&
			strings.Contains(ev.Message, "then replayed") {
			found = true
		}
		if ev.Kind == cluster.EventMetadataError {
			t.Errorf("metadata error: %s", ev.Message)
		}
	}
	if !found {
		t.Errorf("no event of node 2 loading snapshot %v then replaying", res.Snapshot)
	}
}
