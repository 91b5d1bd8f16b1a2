package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/control"
)

// servePlayground serves pg's control API on a session of its own, as
// kraftlab up does, and returns a client for it.
func servePlayground(t *testing.T, pg *cluster.Playground) *control.Client {
	t.Helper()
	home, err := os.MkdirTemp("", "kltui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	s, err := control.NewSession(home, "attach")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	srv := control.NewServer(pg, func() {})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), flowWait)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
		ln.Close()
	})
	c := control.NewClient(s)
	t.Cleanup(c.Close)
	return c
}

// Two screens watch one playground over its control socket, as kraftlab
// tui does (a projector and a laptop): both show a say, either may act,
// and quitting one leaves the playground and the other screen running.
func TestFlowScreensAttachedToARunningPlayground(t *testing.T) {
	pg, _ := openPlayground(t, 3, 1, clustertest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var screens []*teatest.TestModel
	for range 2 {
		m := New(ctx, servePlayground(t, pg), Options{Interval: 20 * time.Millisecond})
		tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
		t.Cleanup(func() {
			tm.Quit()
			tm.WaitFinished(t, teatest.WithFinalTimeout(flowWait))
		})
		screens = append(screens, tm)
	}
	projector, laptop := screens[0], screens[1]
	for _, tm := range screens {
		waitFor(t, tm, "leader 1", "Commit: HWM")
	}

	if _, err := pg.Say(ctx, "Now watch the leader die"); err != nil {
		t.Fatal(err)
	}
	for _, tm := range screens {
		waitFor(t, tm, "» Now watch the leader die")
	}

	// The laptop kills the leader; the projector shows it.
	laptop.Type("l")
	laptop.Type("x")
	waitFor(t, projector, "killed node 1 (the leader of epoch 1)")

	laptop.Type("q")
	waitFor(t, laptop, "Quit? (the playground keeps running) y quits, any other key stays")
	laptop.Type("y")
	m := laptop.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(*Model)
	if !m.Quitting() {
		t.Error("the laptop's screen did not quit")
	}
	if _, err := pg.Status(ctx); err != nil {
		t.Fatalf("the playground stopped with a watching screen: %v", err)
	}
	if _, err := pg.Say(ctx, "still here"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, projector, "» still here")
	if final := m.View(); !strings.Contains(final, "Now watch the leader die") {
		t.Errorf("the laptop's last screen lacks the say:\n%s", final)
	}
}
