package tui

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// TestRecordVoters records a dynamic quorum (kraft.version 1) on a real
// fast-profile cluster of one controller and one broker: grown to three
// voters, one controller at a time; a fourth controller started only as
// an observer; then the first leader removed from the voters, which
// makes it resign and the added voters elect a leader.
// KRAFTLAB_TUI_RECORD=1 go test -run TestRecordVoters ./tui
func TestRecordVoters(t *testing.T) {
	ctx := context.Background()
	rec := newRecorderOf(t, "testdata/voters*.json", "the real engine, 1 controller and 1 broker, kraft.version 1, profile fast", 1, 1, []string{"kraft.version=1"})
	pg := rec.pg
	rec.until("a leader and the broker unfenced", 30*time.Second, func(v *view.View) bool {
		return v.LeaderID != view.NoLeader && unfencedBrokers(v) == 1
	})
	for range 2 {
		if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActAddController}); err != nil {
			t.Fatal(err)
		}
	}
	rec.until("three voters, caught up", 30*time.Second, func(v *view.View) bool {
		return len(v.CurrentVoters) == 3 && v.MaxFollowerLag == 0
	})
	rec.frames(2 * time.Second)
	grown := rec.cut()
	grown.Select = 3
	rec.save("voters-grown", grown)

	res, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActAddController, Observer: true})
	if err != nil {
		t.Fatal(err)
	}
	observer := res.Nodes[0]
	rec.until("the new controller observing, caught up", 30*time.Second, func(v *view.View) bool {
		n, ok := v.Node(observer)
		return ok && n.Role == view.RoleObserver && n.LogEndOffset == v.HighWatermark
	})
	rec.frames(time.Second)
	obs := rec.cut()
	obs.Select = observer
	rec.save("voters-observer", obs)

	first := rec.last.LeaderID
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActRemoveController, Node: condition.NodeID(first)}); err != nil {
		t.Fatal(err)
	}
	rec.until("a leader among the two voters left, the removed one observing", 30*time.Second, func(v *view.View) bool {
		n, ok := v.Node(first)
		return v.LeaderID != view.NoLeader && v.LeaderID != first && len(v.CurrentVoters) == 2 &&
			!slices.ContainsFunc(v.CurrentVoters, func(r view.Replica) bool { return r.NodeID == first }) &&
			ok && n.Role == view.RoleObserver
	})
	rec.frames(time.Second)
	shrunk := rec.cut()
	shrunk.Select = first
	rec.save("voters-shrunk", shrunk)
}
