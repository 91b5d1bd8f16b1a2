package partition

import (
	"testing"
	"time"
)

// A follower is caught up as of a fetch for everything the leader held at
// its previous fetch, so one that keeps up with a busy leader stays in the
// ISR, while one that falls further behind each time leaves it.
func TestLastCaughtUpTime(t *testing.T) {
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type fetch struct {
		at             int
		offset, leoNow int64
		caughtUpAt     int // -1: never
	}
	cases := []struct {
		name    string
		fetches []fetch
	}{
		{"at the leader's end", []fetch{{0, 10, 10, 0}, {5, 12, 12, 5}}},
		{"at the end of the previous fetch", []fetch{{0, 10, 10, 0}, {5, 10, 14, 0}, {9, 14, 18, 5}, {12, 18, 20, 9}}},
		{"further behind each time", []fetch{{0, 3, 10, -1}, {5, 8, 14, -1}, {9, 12, 18, -1}}},
		{"behind, then at the end", []fetch{{0, 3, 10, -1}, {5, 10, 12, 0}, {7, 12, 12, 7}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &replicaState{leo: -1, lastFetchLeaderLEO: -1}
			for i, f := range c.fetches {
				r.updateFetch(f.offset, f.leoNow, -1, ms(f.at))
				want := time.Time{}
				if f.caughtUpAt >= 0 {
					want = ms(f.caughtUpAt)
				}
				if !r.lastCaughtUp.Equal(want) {
					t.Fatalf("fetch %d: last caught up %v, want %v", i, r.lastCaughtUp.Sub(t0), want.Sub(t0))
				}
			}
		})
	}
}

// A follower that trails a busy leader by one fetch stays in the ISR past
// replica.lag.time.max.ms; one that stops fetching leaves it.
func TestSteadyFollowerStaysInISR(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1, 2, 3})
	now := t0
	prevLEO := p.LogEndOffset()
	for range 30 {
		now = now.Add(lag / 10)
		mustAppend(t, p, 1)
		fetch(t, p, 2, prevLEO, now) // everything the leader had at the last round
		prevLEO = p.LogEndOffset()
	}
	prop, ok := p.ISRChange(now)
	if !ok || prop.Kind != ShrinkISR || len(prop.Changed) != 1 || prop.Changed[0] != 3 {
		t.Fatalf("proposal %+v %v, want only 3 removed", prop, ok)
	}
}
