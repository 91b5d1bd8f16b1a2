package tui

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

// On a screen with room for every panel, b cycles the brokers' place
// through the brokers, the partitions, the fetcher threads, the
// consumer groups and the messages, and each pane's title says what b
// shows next.
func TestPaneKeyCyclesBrokersPartitionsFetchers(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	m := newModel(t, pg, 200, 60)
	for _, want := range []string{
		"Brokers: lifecycle, fencing, LAG* (kraftlab's own) (b: partitions)",
		"Partitions: ISR, high watermark, each replica's log end (b: fetchers)",
		"Fetchers: each broker's replica fetcher threads (b: groups)",
		"Groups: coordinator, members, committed offsets, lag (b: messages)",
		"Messages, oldest first: ─▶ delivered, ┄▷ held at its link (b: brokers)",
		"Brokers: lifecycle, fencing, LAG* (kraftlab's own) (b: partitions)",
	} {
		if !strings.Contains(m.View(), want) {
			t.Fatalf("the screen lacks %q:\n%s", want, m.View())
		}
		press(t, m, "b")
	}
}

// On a screen that shows one panel at a time, b first brings the data
// pane to the front as it is, then cycles it; the tab bar names the pane
// shown.
func TestPaneKeyBringsTheDataPaneToTheFrontOfTheTabs(t *testing.T) {
	pg, _ := openPlayground(t, 3, 3, clustertest.Options{})
	m := newModel(t, pg, 80, 24)
	if !m.tabbed() {
		t.Fatalf("an 80x24 screen is not tabbed:\n%s", m.View())
	}
	if strings.Contains(m.View(), "[Brokers]") {
		t.Fatalf("the brokers tab is in front before any key:\n%s", m.View())
	}
	press(t, m, "b")
	if !strings.Contains(m.View(), "[Brokers]") || !strings.Contains(m.View(), "Brokers: lifecycle") {
		t.Fatalf("b did not bring the brokers pane to the front:\n%s", m.View())
	}
	press(t, m, "b")
	if !strings.Contains(m.View(), "[Partitions]") || !strings.Contains(m.View(), "Partitions: ISR") {
		t.Fatalf("a second b did not show the partitions:\n%s", m.View())
	}
	press(t, m, "tab", "b")
	if !strings.Contains(m.View(), "[Partitions]") {
		t.Fatalf("b after tab did not bring the partitions back to the front:\n%s", m.View())
	}
}
