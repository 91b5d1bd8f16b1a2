package raftsim

import (
	"fmt"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// livenessSeeds is how many leader kills the liveness test measures.
const livenessSeeds = 200

// With Kafka's defaults, a killed leader is replaced once its followers'
// fetch timeout runs out, plus a pre-vote and a vote, and the new leader
// commits right after. When two followers time out together and split the
// vote, each waits out its election timeout ([T, 2T)) and a backoff (up to
// controller.quorum.election.backoff.max.ms) before trying again. The test
// logs the distribution and checks every run stays between the fetch
// timeout (minus the long-poll wait, since the last successful fetch) and
// the fetch timeout plus two election timeouts plus the backoff maximum.
func TestLivenessAfterLeaderKill(t *testing.T) { inModes(t, testLivenessAfterLeaderKill) }

func testLivenessAfterLeaderKill(t *testing.T, mode raft.Replication) {
	cfg := raft.DefaultConfig()
	cfg.Replication = mode
	for _, voters := range []int{3, 5} {
		var elected, committed []time.Duration
		for seed := uint64(1); seed <= livenessSeeds; seed++ {
			f, err := MeasureFailover(seed, voters, cfg, 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			elected = append(elected, f.Elected)
			committed = append(committed, f.Committed)
		}
		e, c := Percentiles(elected), Percentiles(committed)
		t.Logf("%v, %d voters, %d leader kills, Kafka defaults: elected p50=%v p90=%v p99=%v max=%v; committing again p50=%v p90=%v p99=%v max=%v",
			mode, voters, livenessSeeds, ms(e[0]), ms(e[1]), ms(e[2]), ms(e[3]), ms(c[0]), ms(c[1]), ms(c[2]), ms(c[3]))
		lo, hi := cfg.FetchTimeout-cfg.FetchMaxWait, cfg.FetchTimeout+2*cfg.ElectionTimeout+cfg.ElectionBackoffMax
		for i := range elected {
			if elected[i] < lo || committed[i] > hi {
				t.Errorf("%d voters, seed %d: elected after %v, committing after %v; want within [%v, %v]", voters, i+1, elected[i], committed[i], lo, hi)
			}
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond)) }

// BenchmarkFailover reports, over b.N leader kills with Kafka's defaults in
// a cluster of three, the percentiles of the time to elect a new leader and
// to commit again (virtual time; the wall time per op is the simulation's).
func BenchmarkFailover(b *testing.B) {
	cfg := raft.DefaultConfig()
	var elected, committed []time.Duration
	for i := range b.N {
		f, err := MeasureFailover(uint64(i+1), 3, cfg, 100*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		elected = append(elected, f.Elected)
		committed = append(committed, f.Committed)
	}
	e, c := Percentiles(elected), Percentiles(committed)
	for i, name := range []string{"p50", "p90", "p99", "max"} {
		b.ReportMetric(float64(e[i])/float64(time.Millisecond), "elected-"+name+"-ms")
		b.ReportMetric(float64(c[i])/float64(time.Millisecond), "committed-"+name+"-ms")
	}
}
