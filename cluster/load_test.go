package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/record"
)

func TestLoadActionChecksAndSaysWhatItDid(t *testing.T) {
	p, _ := open(t, 3, 0)
	ctx := context.Background()
	for _, tc := range []struct {
		a    cluster.Action
		want string
	}{
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: -1}, "must be between 0 (stop) and 100000"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: cluster.MaxLoadRate + 1}, "must be between 0 (stop) and 100000"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 10, RecordBytes: -5}, "load record size -5 B must be between 16 B and 32 KiB"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 10, RecordBytes: cluster.MaxLoadRecordBytes + 1}, "must be between 16 B and 32 KiB"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 100_000, RecordBytes: 1000}, "load of 100000 records/s of 1000 B is 95 MiB/s, more than the 32 MiB/s a playground takes"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 10, Node: ref("leader")}, "load takes no node"},
	} {
		_, err := p.Do(ctx, tc.a)
		if !errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a bad action saying %q", tc.a, err, tc.want)
		}
	}
	if v := p.View(); v.Load.On() {
		t.Fatalf("a refused load runs: %+v", v.Load)
	}

	steps := []struct {
		a    cluster.Action
		want string
	}{
		{cluster.Action{Kind: cluster.ActLoad}, "load is already off (0 records committed so far)"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 200}, "load started: 200 rec/s of 100 B, appended on the leader"},
		{cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 500, RecordBytes: 2048}, "load changed: 500 rec/s of 2.0 KiB (was 200 rec/s of 100 B)"},
		{cluster.Action{Kind: cluster.ActLoad}, "load stopped ("},
	}
	for _, s := range steps {
		if res := do(t, p, s.a); res.Action != cluster.ActLoad || !strings.HasPrefix(res.Message, s.want) {
			t.Errorf("%s: %+v, want %q", s.a, res, s.want)
		}
	}
	var loads []string
	for _, ev := range p.EventStream().Since(0) {
		if ev.Kind == cluster.EventLoad {
			loads = append(loads, ev.Message)
		}
	}
	if len(loads) != len(steps) || !strings.HasPrefix(loads[1], "load started") || !strings.HasPrefix(loads[3], "load stopped") {
		t.Errorf("load events: %q", loads)
	}
	if got := (cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: 200}).String(); got != "load 200 --size 100" {
		t.Errorf("String() = %q", got)
	}
	if got := (cluster.Action{Kind: cluster.ActLoad}).String(); got != "load stop" {
		t.Errorf("String() = %q", got)
	}
}

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

// Load records are real ConfigRecords of exactly the size asked for, every
// size from the smallest up, across the length prefixes' boundaries.
func TestLoadRecordsAreConfigRecordsOfTheSizeAsked(t *testing.T) {
	sizes := []int{cluster.MinLoadRecordBytes, 17, 100, 142, 143, 144, 145, 16400, 16401, 16402, 16403, cluster.MaxLoadRecordBytes}
	for _, size := range sizes {
		recs, err := cluster.LoadRecords(41, 3, size)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		for i, v := range recs {
			if len(v) != size {
				t.Fatalf("size %d: record %d has %d B", size, i, len(v))
			}
			r, err := record.Decode(v)
			if err != nil {
				t.Fatalf("size %d: record %d: %v", size, i, err)
			}
			c, ok := r.(*record.ConfigRecord)
			if !ok || c.ResourceType != record.ResourceTopic || c.Name != "seq" || c.Value == nil {
				t.Fatalf("size %d: record %d is %+v", size, i, r)
			}
			if want := strconv.Itoa(41 + i); size >= 40 && !strings.HasPrefix(*c.Value, want) {
				t.Errorf("size %d: value %.30q does not start with its sequence number %s", size, *c.Value, want)
			}
		}
	}
	if _, err := cluster.LoadRecords(0, 1, cluster.MinLoadRecordBytes-1); err == nil {
		t.Error("a load record below the minimum size was made")
	}
}
