package tui

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// These flows run the screen as a real program (teatest) with its own
// pulls on its own tick, against a playground on the in-test engine, and
// drive it with keys as a person would.

const flowWait = 10 * time.Second

// startFlow runs the screen on pg in a 160x48 terminal.
func startFlow(t *testing.T, pg *cluster.Playground) *teatest.TestModel {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := New(ctx, pg, Options{Interval: 20 * time.Millisecond, OwnsCluster: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	t.Cleanup(func() {
		tm.Quit() // a no-op once the flow quit through the screen
		tm.WaitFinished(t, teatest.WithFinalTimeout(flowWait))
		cancel()
	})
	return tm
}

// waitFor waits until the program has written every one of wants.
func waitFor(t *testing.T, tm *teatest.TestModel, wants ...string) {
	t.Helper()
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		for _, w := range wants {
			if !bytes.Contains(seen.Bytes(), []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(flowWait), teatest.WithCheckInterval(10*time.Millisecond))
}

// quit quits through the confirmation and returns the final model.
func quit(t *testing.T, tm *teatest.TestModel) *Model {
	t.Helper()
	tm.Type("q")
	waitFor(t, tm, "Quit and stop the playground?")
	tm.Type("y")
	return tm.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(*Model)
}

func TestFlowKillTheLeader(t *testing.T) {
	pg, _ := openPlayground(t, 3, 1, clustertest.Options{ElectionDelay: 300 * time.Millisecond})
	tm := startFlow(t, pg)
	waitFor(t, tm, "leader 1", "Commit: HWM")

	tm.Type("l") // select the leader
	tm.Type("x") // kill it
	waitFor(t, tm, "killed node 1 (the leader of epoch 1)", "leader none", "Prospective")
	waitFor(t, tm, "elected leader in epoch 2", "epoch 2")

	m := quit(t, tm)
	v := m.view
	if v.LeaderID == 1 || v.LeaderID == view.NoLeader || v.LeaderEpoch != 2 {
		t.Fatalf("after killing the leader: %s", summary(&v))
	}
	if n, _ := v.Node(1); n.State != view.StateKilled {
		t.Fatalf("node 1 is %s", n.State)
	}
	// The screen's last frame tells the story in words.
	screen := m.View()
	for _, want := range []string{"killed node 1 (the leader of epoch 1)", "elected leader in epoch 2", "1 killed"} {
		if !strings.Contains(screen, want) {
			t.Errorf("final screen lacks %q:\n%s", want, screen)
		}
	}
	if row := lineWith(t, screen, "▶    1 "); !strings.Contains(row, "killed") {
		t.Errorf("node 1's row: %q", row)
	}
	if !regexp.MustCompile(fmt.Sprintf(`%4d Leader`, v.LeaderID)).MatchString(screen) {
		t.Errorf("the commit picture does not show the new leader %d:\n%s", v.LeaderID, screen)
	}
}

func TestFlowPartition(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	tm := startFlow(t, pg)
	waitFor(t, tm, "leader 1", "every link is healthy")

	// Partition the leader from follower 2: it keeps a majority with 3.
	tm.Type("l")
	tm.Type("p")
	waitFor(t, tm, "partition node 1 from: [2]")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "partitioned 1 <-> 2", "partitioned from 2", "1 ↔ 2    DOWN")

	// Isolate the leader: check-quorum makes it resign, 2 and 3 elect.
	tm.Type("i")
	waitFor(t, tm, "isolated node 1", "Resigned", "elected leader in epoch 2")

	// Heal everything.
	tm.Type("H")
	waitFor(t, tm, "healed every link", "every link is healthy")

	m := quit(t, tm)
	v := m.view
	for _, l := range v.Links {
		if l.Fault() != (view.LinkFault{}) {
			t.Fatalf("link %d→%d still faulty after heal all", l.From, l.To)
		}
	}
	if v.LeaderEpoch < 2 {
		t.Fatalf("no new epoch after isolating the leader: %s", summary(&v))
	}
}

func summary(v *view.View) string {
	return fmt.Sprintf("leader %d epoch %d hwm %d", v.LeaderID, v.LeaderEpoch, v.HighWatermark)
}
