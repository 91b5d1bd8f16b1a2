package raftsim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// Failover is what one leader kill cost: the time from the kill until a
// leader of a new epoch was elected, and until the high watermark moved
// past where it was at the kill.
type Failover struct {
	Elected   time.Duration
	Committed time.Duration
}

// MeasureFailover starts a cluster of voters with cfg, lets it run for a
// random while with the counter appending every appendEvery, kills the
// leader and measures the failover.
func MeasureFailover(seed uint64, voters int, cfg raft.Config, appendEvery time.Duration) (Failover, error) {
	c, err := New(Options{Seed: seed, Voters: voters, Config: cfg, Replication: cfg.Replication, AppendInterval: appendEvery})
	if err != nil {
		return Failover{}, err
	}
	if err := c.RunUntil(func() bool { return c.LeaderHighWatermark() > 0 }, 30*time.Second); err != nil {
		return Failover{}, err
	}
	r := rand.New(rand.NewPCG(seed, 0x6661696c))
	if err := c.RunFor(time.Second + time.Duration(r.Int64N(int64(2*time.Second)))); err != nil {
		return Failover{}, err
	}
	leader, epoch, _ := c.Leader()
	hw := c.LeaderHighWatermark()
	c.Kill(leader)
	killed := c.Now()
	var f Failover
	err = c.RunUntil(func() bool {
		if _, e, ok := c.Leader(); ok && e > epoch {
			if f.Elected == 0 {
				f.Elected = c.Now().Sub(killed)
			}
			return c.LeaderHighWatermark() > hw
		}
		return false
	}, time.Minute)
	if err != nil {
		return f, fmt.Errorf("seed %d: %w", seed, err)
	}
	f.Committed = c.Now().Sub(killed)
	return f, nil
}

// Percentiles summarises durations: p50, p90, p99 and max.
func Percentiles(ds []time.Duration) [4]time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration {
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	return [4]time.Duration{at(0.50), at(0.90), at(0.99), s[len(s)-1]}
}
