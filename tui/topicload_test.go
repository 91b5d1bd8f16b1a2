package tui

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
	ipoll "github.com/kraftlab/kraftlab/internal/poll"
)

// openReal starts a real fast-profile playground of 1 controller and 3
// brokers, and a screen on it once the brokers are unfenced.
func openReal(t *testing.T) (*cluster.Playground, *Model) {
	t.Helper()
	cfg, err := cluster.NewConfig(1, 3, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	m := newModel(t, pg, 160, 48)
	ipoll.Until(t, 30*time.Second, "three unfenced brokers", func() bool {
		pull(t, m)
		return unfencedBrokers(&m.view) == 3
	})
	return pg, m
}

// typeName replaces what the topic form holds with name, typed in one read.
func typeName(t *testing.T, m *Model, name string) {
	t.Helper()
	for range len(m.form.Value()) {
		press(t, m, "backspace")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name)})
}

// hwmRow reads a partition's high watermark off the partitions pane.
var hwmRow = regexp.MustCompile(`orders-(\d)\s+\d+\s+(\d+)`)

// screenHWMs are the high watermarks the partitions pane shows for
// orders, by partition.
func screenHWMs(screen string) map[string]int64 {
	out := map[string]int64{}
	for _, mt := range hwmRow.FindAllStringSubmatch(screen, -1) {
		n, _ := strconv.ParseInt(mt[2], 10, 64)
		out[mt[1]] = n
	}
	return out
}

// P asks for a topic, creates it when it is new and produces to it through
// the brokers: the partitions pane shows every partition's high watermark
// move, and the header the load, from the screen. P again offers the
// loaded topic and stops its load.
func TestTopicLoadKeyProducesToATopic(t *testing.T) {
	pg, m := openReal(t)
	press(t, m, "P")
	if l := lastLine(t, m.View(), 2); !strings.Contains(l, "load 100 rec/s on topic: topic-1") {
		t.Fatalf("P does not offer a new topic-1: %q", l)
	}
	typeName(t, m, "orders")
	if !strings.Contains(m.status.text, "enter creates orders (3 partitions, RF 3), then loads it") {
		t.Fatalf("hint for a new topic: %q", m.status.text)
	}
	press(t, m, "enter")
	if !strings.Contains(m.status.text, "topic load started: 100 rec/s of 100 B, produced to topic orders") {
		t.Fatalf("P, orders, enter: status %q", m.status.text)
	}
	v := pg.View()
	l, on := v.TopicLoad("orders")
	if !on || l.RecordsPerSec != loadRate || l.StartedBy != view.OriginScreen {
		t.Fatalf("the engine's topic loads after P: %+v", v.TopicLoads)
	}
	pull(t, m)
	if h := strings.Join(screenLines(m)[:2], "\n"); !strings.Contains(h, "100/s to orders (screen)") {
		t.Fatalf("the header does not show the topic load:\n%s", h)
	}

	press(t, m, "b") // the partitions pane
	var first map[string]int64
	ipoll.Until(t, 30*time.Second, "orders' three partitions on the partitions pane", func() bool {
		pull(t, m)
		first = screenHWMs(m.View())
		return len(first) == 3
	}, m.View)
	ipoll.Until(t, 30*time.Second, "every partition's high watermark moving on screen", func() bool {
		pull(t, m)
		now := screenHWMs(m.View())
		for p, hwm := range first {
			if now[p] <= hwm {
				return false
			}
		}
		return true
	}, m.View)

	// Every topic is loaded: P offers orders, and enter stops its load.
	press(t, m, "P")
	if got := m.form.Value(); got != "orders" {
		t.Fatalf("P offers %q, want the loaded orders", got)
	}
	if !strings.Contains(m.status.text, "enter stops the load of orders (100 rec/s of 100 B, from the screen)") {
		t.Fatalf("hint for a loaded topic: %q", m.status.text)
	}
	press(t, m, "enter")
	if !strings.Contains(m.status.text, "topic load of orders stopped") {
		t.Fatalf("second P, enter: status %q", m.status.text)
	}
	if v := pg.View(); len(v.TopicLoads) != 0 {
		t.Fatalf("loads after the stop: %+v", v.TopicLoads)
	}
	pull(t, m)
	if h := strings.Join(screenLines(m)[:2], "\n"); !strings.Contains(h, "load off") {
		t.Fatalf("the header after the stop:\n%s", h)
	}
}

// E runs a preferred leader election of every partition: a partition
// whose preferred replica came back after a failover gets it as its
// leader again, and the status line and the event log say so.
func TestElectKeyRunsAPreferredElection(t *testing.T) {
	pg, m := openReal(t)
	ctx := context.Background()
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "e", Partitions: 1, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	isr := func(n int) func() bool {
		return func() bool {
			v := pg.View()
			p, ok := v.Partition("e", 0)
			return ok && len(p.Isr) == n && p.Leader != view.NoLeader
		}
	}
	ipoll.Until(t, 30*time.Second, "e-0 with 3 in sync", isr(3))
	v := pg.View()
	p, _ := v.Partition("e", 0)
	preferred := p.Replicas[0]

	// With its preferred leader leading, there is nothing to elect.
	press(t, m, "E")
	if !strings.Contains(m.status.text, "preferred leader election: every partition has its leader already") {
		t.Fatalf("E with every preferred leader leading: status %q", m.status.text)
	}

	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(preferred)}); err != nil {
		t.Fatal(err)
	}
	ipoll.Until(t, 30*time.Second, "another leader for e-0", func() bool {
		v := pg.View()
		p, _ := v.Partition("e", 0)
		return p.Leader != view.NoLeader && p.Leader != preferred
	})
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(preferred)}); err != nil {
		t.Fatal(err)
	}
	ipoll.Until(t, 30*time.Second, "e-0 with its preferred replica back in sync", isr(3))

	press(t, m, "E")
	if !strings.Contains(m.status.text, "preferred leader election: e-0 elected") {
		t.Fatalf("E: status %q", m.status.text)
	}
	ipoll.Until(t, 30*time.Second, fmt.Sprintf("e-0 led by its preferred replica %d", preferred), func() bool {
		v := pg.View()
		p, _ := v.Partition("e", 0)
		return p.Leader == preferred
	})
	pull(t, m)
	if !strings.Contains(m.View(), "preferred leader election: e-0 elected") {
		t.Fatalf("the event log does not show the election:\n%s", m.View())
	}
}

// Space stops the cluster clock itself, not only the display: the header
// says so and the engine's time stands still until space again.
func TestSpacePausesTheClusterClock(t *testing.T) {
	pg, m := openReal(t)
	press(t, m, " ")
	ipoll.Until(t, 10*time.Second, "the cluster clock paused", func() bool {
		pull(t, m)
		return m.view.Clock.Paused && pg.View().Clock.Paused
	})
	if !strings.Contains(m.View(), "CLOCK PAUSED") {
		t.Fatalf("the header does not say the clock is paused:\n%s", m.View())
	}
	press(t, m, " ")
	ipoll.Until(t, 10*time.Second, "the cluster clock running again", func() bool {
		pull(t, m)
		return !m.view.Clock.Paused && !pg.View().Clock.Paused
	})
}
