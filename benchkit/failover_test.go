package benchkit

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
)

// TestFailoverFastProfile changes the leader twice in each way on the fast
// profile and checks every round found a different leader in a later
// epoch, with its first commit no earlier than its election.
func TestFailoverFastProfile(t *testing.T) {
	var progress bytes.Buffer
	rs, err := RunFailovers(context.Background(), FailoverPlan{
		Profiles: []string{string(cluster.ProfileFast)},
		Changes:  Changes(),
		Rounds:   2,
		Dir:      t.TempDir(),
	}, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rs) != len(Changes()) {
		t.Fatalf("%d results, want one per change", len(rs))
	}
	fast, _ := cluster.ProfileSettings(cluster.ProfileFast)
	for _, r := range rs {
		if r.Rounds != 2 || len(r.Samples) != 2 || r.Error != "" {
			t.Fatalf("%s: %d rounds, error %q", r.Change, r.Rounds, r.Error)
		}
		for _, s := range r.Samples {
			if s.NewEpoch <= s.OldEpoch || s.ToLeader <= 0 || s.ToCommit < s.ToLeader {
				t.Errorf("%s: sample %+v", r.Change, s)
			}
			if r.Change == ChangeKill && s.NewLeader == s.OldLeader {
				t.Errorf("kill: the killed node %d leads again", s.OldLeader)
			}
			// A killed leader is noticed only once a fetch times out.
			if r.Change == ChangeKill && s.ToLeader < fast.FetchTimeout/2 {
				t.Errorf("kill: new leader after %v, before the fetch timeout %v could pass", s.ToLeader, fast.FetchTimeout)
			}
		}
		if r.NewLeader.P50 <= 0 || r.NewLeader.Max < r.NewLeader.P99 || r.HighWatermark.P99 < r.NewLeader.P99 {
			t.Errorf("%s: spreads %+v %+v", r.Change, r.NewLeader, r.HighWatermark)
		}
	}
	if rs[0].Bound != fast.FetchTimeout+2*fast.ElectionTimeout || rs[2].Bound != 100*time.Millisecond {
		t.Errorf("bounds %v and %v", rs[0].Bound, rs[2].Bound)
	}
	var buf bytes.Buffer
	if err := WriteFailoverTable(&buf, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fast", "kill", "stop", "resign", "fetch timeout 200ms + 2 × election timeout 100ms"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestFailoverRejectsBadPlans(t *testing.T) {
	ctx := context.Background()
	if _, err := RunFailovers(ctx, FailoverPlan{Profiles: []string{"slow"}, Changes: Changes(), Dir: t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Error("unknown profile accepted")
	}
	if _, err := RunFailovers(ctx, FailoverPlan{Profiles: []string{string(cluster.ProfileFast)}, Changes: Changes(), Set: []string{"controller.quorum.fetch.timeout.ms=-5"}, Dir: t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Error("a negative fetch timeout accepted")
	}
	fast, _ := cluster.ProfileSettings(cluster.ProfileFast)
	if _, err := RunFailover(ctx, FailoverConfig{Profile: "fast", Settings: fast, Change: "explode", Rounds: 1, Dir: t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Error("unknown change accepted")
	}
	if _, err := RunFailover(ctx, FailoverConfig{Profile: "fast", Settings: fast, Change: ChangeKill, Rounds: 0, Dir: t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Error("zero rounds accepted")
	}
}

func TestSpread(t *testing.T) {
	var ds []time.Duration
	for i := 20; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := SpreadOf(ds)
	if s.P50 != 10*time.Millisecond || s.P99 != 20*time.Millisecond || s.Max != 20*time.Millisecond {
		t.Fatalf("spread of 1..20 ms = %+v", s)
	}
	if ds[0] != 20*time.Millisecond {
		t.Fatal("spread sorted its argument")
	}
	if (SpreadOf(nil) != Spread{}) {
		t.Fatal("spread of nothing")
	}
}
