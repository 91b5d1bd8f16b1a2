package raftsim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// dataLossSeeds is how many seeds the recovery run takes by default;
// KRAFTLAB_DATALOSS_SEEDS raises it, KRAFTLAB_DATALOSS_SEED=N replays one.
const dataLossSeeds = 100

// Kafka: canRecoverFromSingleNodeCommittedDataLoss. One node's folder is
// wiped; once a leader other than it is known everywhere it restarts empty,
// catches up and the quorum commits on. MonotonicHighWatermark, SingleLeader
// and ConsistentCommittedData hold throughout.
func TestRecoverFromSingleNodeCommittedDataLoss(t *testing.T) {
	inModes(t, testRecoverFromDataLoss)
}

func testRecoverFromDataLoss(t *testing.T, mode raft.Replication) {
	first, count := uint64(1), dataLossSeeds
	if s := os.Getenv("KRAFTLAB_DATALOSS_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KRAFTLAB_DATALOSS_SEEDS=%q", s)
		}
		count = n
	}
	if s := os.Getenv("KRAFTLAB_DATALOSS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KRAFTLAB_DATALOSS_SEED=%q", s)
		}
		first, count = n, 1
	}
	for seed := first; seed < first+uint64(count); seed++ {
		trace := 0
		if count == 1 {
			trace = 400
		}
		c, victim, err := RunDataLoss(seed, mode, true, trace)
		if err != nil {
			msg := fmt.Sprintf("seed %d (wiped node %d): %v\nreplay: KRAFTLAB_DATALOSS_SEED=%d go test -run 'TestRecoverFromSingleNodeCommittedDataLoss/%v$' -v ./replication/raft/raftsim/", seed, victim, err, seed, mode)
			if c != nil && trace > 0 {
				msg += "\ntrace tail:\n" + strings.Join(c.Trace(), "\n")
			}
			t.Error(msg)
		}
	}
}

// The danger of static voters without directory ids (kraft.version 0): a
// voter whose folder was wiped comes back as a blank voter with no vote to
// remember and an empty log, so it grants its vote to any candidate. Here
// the leader L and follower G commit while follower F is cut off; then L
// dies and G loses its folder. F, whose log lacks the committed records,
// wins with G's vote, and the records the quorum had committed are gone:
// the new leader's first record (its LeaderChange) commits at an offset
// that already held a committed record. Kafka with a static
// voter set would do the same (KIP-853's directory ids are its cure: a
// wiped voter gets a new directory id and is no longer a voter). The
// simulation catches it as a ConsistentCommittedData violation, at the
// event where the new leader commits over the lost record.
func TestScenarioWipedVoterElectsLeaderWithoutCommittedData(t *testing.T) {
	inModes(t, func(t *testing.T, mode raft.Replication) {
		c := newCluster(t, mode, 9, 3, 0)
		c.mustRun(t, nil, time.Second)
		l, epoch := c.mustLeader(t)
		f, g := l%3+1, (l+1)%3+1
		c.Isolate(f)
		c.mustRun(t, nil, 2*time.Second)
		hw := c.inv.hwm
		if end := c.node(f).log.LogEndOffset(); end >= hw {
			t.Fatalf("cut-off follower %d holds %d, not behind the high watermark %d", f, end, hw)
		}
		c.Kill(l)
		c.KillAndDeletePersistentState(g)
		c.Heal()
		c.Restart(g)
		err := c.RunUntil(func() bool {
			_, e, ok := c.Leader()
			return ok && e > epoch && c.LeaderHighWatermark() > 0
		}, 20*time.Second)
		if err == nil {
			err = c.RunFor(5 * time.Second)
		}
		if err == nil || !(strings.Contains(err.Error(), "ConsistentCommittedData") || strings.Contains(err.Error(), "MonotonicHighWatermark")) {
			t.Fatalf("want the committed data lost (ConsistentCommittedData or MonotonicHighWatermark), got %v\n%s", err, c.describe())
		}
		newLeader, _, _ := c.Leader()
		if newLeader != f {
			t.Fatalf("leader %d, want the lagging follower %d", newLeader, f)
		}
		t.Logf("as expected: %v", err)
	})
}

// KRAFTLAB_DATALOSS_ATONCE=N runs N seeds of the recovery with the wiped
// node restarted at once, before a new leader is known, and counts the
// seeds in which committed data was lost. Not part of the default run: it
// is expected to find some.
func TestDataLossRestartAtOnceScan(t *testing.T) { inModes(t, testDataLossRestartAtOnce) }

func testDataLossRestartAtOnce(t *testing.T, mode raft.Replication) {
	s := os.Getenv("KRAFTLAB_DATALOSS_ATONCE")
	if s == "" {
		t.Skip("set KRAFTLAB_DATALOSS_ATONCE=N to scan N seeds")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("KRAFTLAB_DATALOSS_ATONCE=%q", s)
	}
	lost, other, refused := 0, 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		c, victim, err := RunDataLoss(seed, mode, false, 0)
		if c != nil && c.Unsafe() > 0 {
			refused++
		}
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "ConsistentCommittedData") || strings.Contains(err.Error(), "MonotonicHighWatermark"):
			lost++
			if lost <= 5 {
				t.Logf("seed %d (wiped node %d): %v", seed, victim, err)
			}
		default:
			other++
			t.Errorf("seed %d (wiped node %d): %v", seed, victim, err)
		}
	}
	t.Logf("%d seeds restarted at once: %d lost committed data, %d failed otherwise, %d saw news refused as unsafe", n, lost, other, refused)
}
