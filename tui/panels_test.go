package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// threeVoters is a view of a leader (1) with followers 2 and 3, where 3
// lags: the high watermark stands where 2 is.
func threeVoters(now int64) view.View {
	v := view.View{
		ClusterID: "c", Timestamp: now,
		Nodes: []view.Node{
			{ID: 1, Kind: view.KindController, State: view.StateRunning, Role: view.RoleLeader, Epoch: 4, LeaderID: 1, LogEndOffset: 120, HighWatermark: 110,
				Replicas: []view.Replica{
					{NodeID: 2, LogEndOffset: 110, LastFetchTimestamp: now - 40, LastCaughtUpTimestamp: now - 40, ParkedFetch: true},
					{NodeID: 3, LogEndOffset: 95, LastFetchTimestamp: now - 2500, LastCaughtUpTimestamp: now - 9000},
				}},
			{ID: 2, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower, Epoch: 4, LeaderID: 1, LogEndOffset: 110, HighWatermark: 110},
			{ID: 3, Kind: view.KindController, State: view.StateRunning, Role: view.RoleFollower, Epoch: 4, LeaderID: 1, LogEndOffset: 95, HighWatermark: 90},
		},
	}
	v.Derive(time.UnixMilli(v.Timestamp), nil)
	return v
}

func TestCommitPictureShowsWhoHoldsTheHWM(t *testing.T) {
	v := threeVoters(1_000_000)
	out := strings.Join(commitModel{}.view(DefaultStyles(), &v, 100, 10), "\n")
	for _, want := range []string{
		"Commit: HWM 110 is where a majority (2 of 3) stands",
		"   1 Leader",
		"120 caught up",
		"110 ← holds the HWM",
		"95 behind the HWM",
		"▲ HWM 110",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// One cell per record: the follower 15 records behind has 15 fewer
	// filled cells than the one at the HWM.
	lines := strings.Split(out, "\n")
	if d := strings.Count(lineWith(t, out, "   2 Follower"), "█") - strings.Count(lineWith(t, out, "   3 Follower"), "█"); d != 15 {
		t.Errorf("bars differ by %d cells, want 15:\n%s", d, strings.Join(lines, "\n"))
	}
}

func TestCommitPictureWithoutLeader(t *testing.T) {
	v := threeVoters(1_000_000)
	v.Nodes[0].State, v.Nodes[0].Role = view.StateKilled, ""
	v.Derive(time.UnixMilli(v.Timestamp), nil)
	out := strings.Join(commitModel{}.view(DefaultStyles(), &v, 100, 10), "\n")
	if !strings.Contains(out, "no leader, nothing commits") || !strings.Contains(out, "   1 killed") {
		t.Fatalf("no-leader picture:\n%s", out)
	}
}

func TestFlowRatesFromCounters(t *testing.T) {
	var f flowModel
	at := int64(1_000_000)
	for i := range 11 { // ten intervals of 100ms: 20 Fetches a second
		v := threeVoters(at + int64(i)*100)
		v.Links = []view.Link{
			{From: 2, To: 1, RPC: map[string]view.RPCStats{"Fetch": {Requests: int64(2 * i)}}},
			{From: 1, To: 2, RPC: map[string]view.RPCStats{"BeginQuorumEpoch": {Requests: 1}}},
		}
		if i == 3 {
			v.Links[1].RPC["BeginQuorumEpoch"] = view.RPCStats{Requests: 0}
		}
		f.add(&v)
	}
	v := threeVoters(at + 1000)
	out := strings.Join(f.view(DefaultStyles(), &v, 100, 10), "\n")
	for _, want := range []string{
		"Fetch               2→1     20.0/s waiting: parked",
		"BeginQuorumEpoch    1→2       idle last 600ms ago",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// A counter that starts over (its node restarted) is not a negative rate.
	v = threeVoters(at + 1100)
	v.Links = []view.Link{{From: 2, To: 1, RPC: map[string]view.RPCStats{"Fetch": {Requests: 3}}}}
	f.add(&v)
	if r := f.rate(flowKey{2, 1, "Fetch"}); r < 0 {
		t.Fatalf("rate %v after a restart", r)
	}
}

func TestQuorumTableDropsColumnsWhenNarrow(t *testing.T) {
	v := threeVoters(1_000_000)
	st := DefaultStyles()
	wide := quorumModel{selected: 1}.view(st, &v, 160, 10, -1)
	if len(wide.dropped) != 0 || !strings.Contains(wide.lines[0], "LOG START") {
		t.Fatalf("160 columns dropped %v", wide.dropped)
	}
	narrow := quorumModel{selected: 1}.view(st, &v, 70, 10, -1)
	if len(narrow.dropped) == 0 || strings.Contains(narrow.lines[0], "LOG START") {
		t.Fatalf("70 columns kept every column: %q", narrow.lines[0])
	}
	for _, l := range narrow.lines {
		if lipgloss.Width(l) > 70 {
			t.Fatalf("line wider than 70: %q", l)
		}
	}
	row := lineWith(t, strings.Join(wide.lines, "\n"), "     3 ")
	for _, want := range []string{"Follower", "95", "2.5s", "running"} {
		if !strings.Contains(row, want) {
			t.Errorf("row of node 3 lacks %q: %q", want, row)
		}
	}
}

// TestColourNeverCarriesMeaningAlone renders the same screen with colours
// and without (NO_COLOR makes lipgloss use the ASCII profile): once the
// colours are stripped, the text must be the same, and the coloured one
// must really have colours.
func TestColourNeverCarriesMeaningAlone(t *testing.T) {
	pg, _ := openPlayground(t, 3, 2, clustertest.Options{})
	m := newModel(t, pg, 160, 48)
	press(t, m, "j", "p", "enter")
	pull(t, m)
	plain := m.View()
	lipgloss.SetColorProfile(termenv.TrueColor)
	coloured := m.View()
	lipgloss.SetColorProfile(termenv.Ascii)
	if !strings.Contains(coloured, "\x1b[") {
		t.Fatal("the TrueColor screen has no colour")
	}
	if strings.Contains(plain, "\x1b[") {
		t.Fatal("the ASCII screen has escape sequences")
	}
	if got := ansi.Strip(coloured); got != plain {
		t.Fatalf("colour changed the text:\nplain:\n%s\ncoloured, stripped:\n%s", plain, got)
	}
}
