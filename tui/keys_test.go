package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

// shift+tab goes back through the panels tab goes through, round from
// the first to the last.
func TestShiftTabGoesBack(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	m := newModel(t, pg, 80, 24)
	current := func() string {
		bar := lineWith(t, m.View(), "(tab: next panel")
		i, j := strings.Index(bar, "["), strings.Index(bar, "]")
		return bar[i+1 : j]
	}
	if got := current(); got != "Commit" {
		t.Fatalf("first tab %q", got)
	}
	press(t, m, "tab", "tab")
	if got := current(); got != "Links" {
		t.Fatalf("after two tabs: %q", got)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyShiftTab})
	if got := current(); got != "Flow" {
		t.Errorf("shift+tab from Links: %q, want Flow", got)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyShiftTab})
	m.Update(tea.KeyMsg{Type: tea.KeyShiftTab})
	if got := current(); got != "Brokers" {
		t.Errorf("shift+tab from Commit: %q, want the last tab, Brokers", got)
	}
	press(t, m, "tab")
	if got := current(); got != "Commit" {
		t.Errorf("tab from the last tab: %q, want Commit", got)
	}
}

// W asks before it wipes: any key but y leaves the node alone.
func TestWipeAsksFirst(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	m := newModel(t, pg, 120, 40)
	m.quorum.selected = 2
	press(t, m, "W")
	if l := lastLine(t, m.View(), 2); !strings.Contains(l, "Wipe node 2's disk (its log, snapshots and vote), then start it empty? y wipes") {
		t.Fatalf("W did not ask: %q", l)
	}
	press(t, m, "n")
	pull(t, m)
	for _, ev := range pg.EventStream().Since(0) {
		if strings.Contains(ev.Message, "wiped") {
			t.Fatalf("W then n wiped: %s", ev.Message)
		}
	}
	if !strings.Contains(m.status.text, "wipe 2: not done") {
		t.Errorf("status after n: %q", m.status.text)
	}
	press(t, m, "W", "y")
	if !strings.Contains(m.status.text, "wiped node 2") {
		t.Errorf("W then y: status %q", m.status.text)
	}
}

// T asks for the topic's name, offering the next free topic-N; esc
// creates nothing.
func TestTopicKeyAsksForAName(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	if _, err := pg.Do(context.Background(), cluster.Action{Kind: cluster.ActCreateTopic, Topic: "topic-1", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	m := newModel(t, pg, 80, 24)
	press(t, m, "T")
	if l := lastLine(t, m.View(), 2); !strings.Contains(l, "new topic, 3 partitions, RF 3, name: topic-2") {
		t.Fatalf("T does not offer topic-2: %q", l)
	}
	press(t, m, "esc")
	press(t, m, "T")
	for range len(m.form.Value()) {
		press(t, m, "backspace")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("orders")}) // typed in one read
	press(t, m, "enter")
	pull(t, m)
	if _, ok := m.view.Topic("orders"); !ok {
		t.Fatalf("T, orders, enter: no topic orders; status %q", m.status.text)
	}
	if _, ok := m.view.Topic("topic-2"); ok {
		t.Error("esc created topic-2")
	}
	if len(m.view.Topics) != 2 {
		t.Errorf("topics %v", m.view.Topics)
	}
}

// The full help says where the playground is: the brokers' bootstrap
// addresses and the data folder, which up's banner printed before the
// screen covered it.
func TestFullHelpShowsAddresses(t *testing.T) {
	cfg, err := cluster.NewConfig(3, 3, cluster.ProfileFast, nil, "/tmp/kraftlab-demo-123")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := cluster.OpenWith(context.Background(), cfg, clustertest.Start(clustertest.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		m := newModel(t, pg, size[0], size[1])
		press(t, m, "?")
		screen := m.View()
		lineWith(t, screen, "bootstrap  127.0.0.1:19101,127.0.0.1:19102,127.0.0.1:19103")
		lineWith(t, screen, "data       /tmp/kraftlab-demo-123")
		if size[0] >= 160 {
			lineWith(t, screen, "e.g. kcat -b 127.0.0.1:19101 -L")
		}
	}
}

// + adds a controller and - (after asking) removes the selected node
// from the voters; a static quorum refuses both, and the screen shows
// its refusal as any action's error.
func TestVoterKeysOnAStaticQuorum(t *testing.T) {
	pg, _ := openPlayground(t, 3, 0, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	press(t, m, "+")
	pull(t, m)
	screen := m.View()
	if l := lastLine(t, screen, 2); !strings.Contains(l, "error: controllers add: add a controller: the fake engine's quorum is static") {
		t.Fatalf("status line after +: %q", l)
	}
	if !strings.Contains(lineWith(t, screen, "action-error"), "quorum is static") {
		t.Fatal("the refusal is not in the event log")
	}
	m.quorum.selected = 2
	press(t, m, "-")
	if l := lastLine(t, m.View(), 2); !strings.Contains(l, "Remove node 2 from the voters (RemoveRaftVoter)? y removes") {
		t.Fatalf("- did not ask: %q", l)
	}
	press(t, m, "n")
	if !strings.Contains(m.status.text, "controllers remove 2: not done") {
		t.Errorf("status after - then n: %q", m.status.text)
	}
	press(t, m, "-", "y")
	pull(t, m)
	if l := lastLine(t, m.View(), 2); !strings.Contains(l, "error: controllers remove 2: remove controller 2: the fake engine's quorum is static") {
		t.Fatalf("status line after - then y: %q", l)
	}
}

// A screen on a real cluster only reads it: + and - neither act nor show
// in the full help.
func TestVoterKeysReadOnly(t *testing.T) {
	k := DefaultKeyMap().withoutActions()
	for _, row := range k.FullHelp() {
		for _, b := range row {
			if b.Enabled() && strings.Contains(b.Help().Key, "+") {
				t.Errorf("a read-only screen's help lists %q", b.Help().Key)
			}
		}
	}
	if k.AddVoter.Enabled() || k.RemoveVoter.Enabled() {
		t.Error("a read-only screen takes + or -")
	}
}
