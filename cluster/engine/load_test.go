package engine_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// waitView polls the playground's view until ok holds.
func waitView(t *testing.T, p *cluster.Playground, what string, ok func(*view.View) bool) view.View {
	t.Helper()
	var v view.View
	poll.Until(t, 15*time.Second, what, func() bool {
		v = p.View()
		return ok(&v)
	}, func() string { return fmt.Sprintf("load: %+v, %s", v.Load, v.Summary()) })
	return v
}

// The real engine's load appends on the leader, moves the high watermark,
// follows the leader across a failover and stops cleanly (goleak checks
// its goroutine at the end).
func TestRealEngineLoad(t *testing.T) {
	p := openReal(t, 3, 1, "")
	v := waitCond(t, p, "caught-up")
	if v.Load.On() || v.Load.NodeID != view.NoLeader || v.Load.Committed != 0 {
		t.Fatalf("load before any: %+v", v.Load)
	}
	hwm0 := v.HighWatermark
	do(t, p, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 1000, RecordBytes: 64})
	v = waitView(t, p, "400 load records committed", func(v *view.View) bool { return v.Load.Committed >= 400 })
	// Every committed record is below the high watermark, which a leader
	// publishes a few milliseconds late at most.
	committed := v.Load.Committed
	waitView(t, p, "the high watermark past the committed load", func(v *view.View) bool { return v.HighWatermark >= hwm0+committed })
	if v.Load.NodeID != v.LeaderID || v.Load.RecordsPerSec != 1000 || v.Load.RecordBytes != 64 {
		t.Errorf("load %+v, leader %d", v.Load, v.LeaderID)
	}

	// Kill the leader: the load pauses, then appends on the new one.
	act(t, p, "kill leader")
	v = waitCond(t, p, "new-leader")
	committed = v.Load.Committed
	v = waitView(t, p, "the load on the new leader", func(v *view.View) bool {
		return v.Load.NodeID == v.LeaderID && v.LeaderID != v.Baseline.LeaderID && v.Load.Committed >= committed+400
	})

	do(t, p, cluster.Action{Kind: cluster.ActLoad})
	v = waitView(t, p, "the appends in flight to finish", func(v *view.View) bool { return v.Load.InFlight == 0 })
	if v.Load.On() || v.Load.NodeID != view.NoLeader {
		t.Errorf("stopped load: %+v", v.Load)
	}
	stopped := v.Load.Committed + v.Load.Failed
	// The idle leader's NoOpRecords still move the high watermark; the load
	// counts nothing more.
	hwm := v.HighWatermark
	waitCond(t, p, "hwm > "+strconv.FormatInt(hwm+2, 10))
	if v = p.View(); v.Load.Committed+v.Load.Failed != stopped || v.Load.InFlight != 0 {
		t.Errorf("the load went on after it stopped: %+v", v.Load)
	}
}
