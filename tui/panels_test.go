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
	if len(wide.dropped) != 0 || !strings.Contains(wide.lines[0], "LOG-START") {
		t.Fatalf("160 columns dropped %v", wide.dropped)
	}
	narrow := quorumModel{selected: 1}.view(st, &v, 70, 10, -1)
	if len(narrow.dropped) == 0 || strings.Contains(narrow.lines[0], "LOG-START") {
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

// A node the leader never heard from in its epoch has no known lag (not
// the leader's log end + 1); one it heard from keeps its last offset and
// its age; an old leader ahead of the leader shows its uncommitted tail.
func TestQuorumLagOfDownAndAheadNodes(t *testing.T) {
	now := int64(1_000_000)
	v := threeVoters(now)
	// 3 was killed after its last fetch at 95, 2.5s ago: real lag 25.
	v.Nodes[2].State, v.Nodes[2].Role = view.StateKilled, ""
	// 2 is an old leader, cut off, ahead of the leader: the leader never
	// heard from it in this epoch.
	v.Nodes[0].Replicas[0] = view.Replica{NodeID: 2, LogEndOffset: -1, LastFetchTimestamp: -1, LastCaughtUpTimestamp: -1}
	v.Nodes[1].Role, v.Nodes[1].Epoch, v.Nodes[1].LeaderID, v.Nodes[1].LogEndOffset = view.RoleLeader, 3, 2, 134
	v.Derive(time.UnixMilli(now), nil)
	st := DefaultStyles()
	table := strings.Join(quorumModel{selected: 1}.view(st, &v, 160, 10, -1).lines, "\n")
	for _, h := range []string{"FOLLOWS", "LEADER-SAW", "LAST-FETCH", "LOG-START"} {
		if !strings.Contains(table, h) {
			t.Errorf("no heading %s:\n%s", h, table)
		}
	}
	row2 := strings.Fields(rowStarting(t, table, "     2 "))
	// NODE ROLE EPOCH FOLLOWS LEO LEADER-SAW LAG...
	if got := strings.Join(row2[:8], " "); got != "2 Leader 3 self 134 never +14 uncommitted" {
		t.Errorf("row of the old leader ahead: %q", got)
	}
	row3 := strings.Fields(rowStarting(t, table, "     3 "))
	if got := strings.Join(row3[:7], " "); got != "3 - 4 - 95 95 25" || !strings.Contains(rowStarting(t, table, "     3 "), "2.5s") {
		t.Errorf("row of the killed node: %q", rowStarting(t, table, "     3 "))
	}
	if strings.Contains(table, "121") {
		t.Errorf("a lag of the leader's log end + 1:\n%s", table)
	}
	d := quorumModel{selected: 2}.detail(st, &v, 300)
	if !strings.Contains(d, "leader 1 has not heard from it in epoch 4; its log ends at 134, 14 past the leader's 120: uncommitted") {
		t.Errorf("detail of node 2: %s", d)
	}
	d = quorumModel{selected: 3}.detail(st, &v, 300)
	if !strings.Contains(d, "last reported offset 95 to leader 1, 2.5s ago") {
		t.Errorf("detail of node 3: %s", d)
	}
}

// A follower whose leader is down says so in FOLLOWS.
func TestQuorumFollowsADownLeader(t *testing.T) {
	v := threeVoters(1_000_000)
	v.Nodes[0].State, v.Nodes[0].Role = view.StateKilled, ""
	v.Derive(time.UnixMilli(v.Timestamp), nil)
	table := strings.Join(quorumModel{selected: 1}.view(DefaultStyles(), &v, 80, 10, -1).lines, "\n")
	if row := rowStarting(t, table, "     2 "); !strings.Contains(row, "1 down") {
		t.Errorf("row of a follower of the killed leader: %q\n%s", row, table)
	}
	for _, l := range strings.Split(table, "\n") {
		if lipgloss.Width(l) > 80 {
			t.Errorf("wider than 80: %q", l)
		}
	}
}

// rowStarting returns the first line of screen that starts with prefix.
func rowStarting(t *testing.T, screen, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starting %q in:\n%s", prefix, screen)
	return ""
}

// Without a leader the header says why, from the view, in at most two
// lines on 80 columns.
func TestHeaderSaysWhyThereIsNoLeader(t *testing.T) {
	st := DefaultStyles()
	now := int64(1_000_000)
	h := headerModel{started: time.UnixMilli(now - 65_000)}
	render := func(v *view.View, w int) string {
		out := h.view(st, v, false, w)
		if len(out) > 2 {
			t.Errorf("header of %d lines at %d columns:\n%s", len(out), w, strings.Join(out, "\n"))
		}
		for _, l := range out {
			if lipgloss.Width(l) > w {
				t.Errorf("header line wider than %d: %q", w, l)
			}
		}
		return strings.Join(out, "\n")
	}
	kill := func(v *view.View, ids ...int) {
		for _, id := range ids {
			v.Nodes[id-1].State, v.Nodes[id-1].Role = view.StateKilled, ""
		}
		v.Derive(time.UnixMilli(now), &view.Baseline{Action: "kill", NodeID: int32(ids[0]), LeaderID: 1, Timestamp: now - 150})
		v.ClusterID = "EDo1_i8B7LGeBo-Ff2DCgw"
		v.Profile = "fast"
	}

	// Just after the leader's kill: the followers still follow it.
	v := threeVoters(now)
	kill(&v, 1)
	for w, want := range map[int]string{
		160: "no leader: 2 and 3 still follow 1 (killed 150ms ago); each stands for election when its fetch timeout passes",
		80:  "2,3 follow 1 (killed 150ms ago) until their fetch timeout; then an election",
	} {
		if out := render(&v, w); !strings.Contains(out, want) || !strings.Contains(out, "leader none") {
			t.Errorf("at %d columns, no %q:\n%s", w, want, out)
		}
	}
	if out := render(&v, 80); strings.Contains(out, "election?") {
		t.Errorf("a guessed election:\n%s", out)
	}
	// With the followers' fetch deadlines in the view, the countdown to the
	// first one's election.
	v.Nodes[1].FetchDeadlineTimestamp, v.Nodes[2].FetchDeadlineTimestamp = now+1800, now+1300
	for w, want := range map[int]string{
		160: "each stands for election when its fetch timeout passes (the first in 1.3s)",
		80:  "2,3 follow 1 (killed 150ms ago) until their fetch timeout in 1.3s",
	} {
		if out := render(&v, w); !strings.Contains(out, want) {
			t.Errorf("at %d columns, no %q:\n%s", w, want, out)
		}
	}
	v.Nodes[1].FetchDeadlineTimestamp, v.Nodes[2].FetchDeadlineTimestamp = 0, 0

	// An election under way.
	v.Nodes[1].Role, v.Nodes[1].Epoch = view.RoleCandidate, 5
	if out := render(&v, 80); !strings.Contains(out, "election in epoch 5: 2 Candidate") {
		t.Errorf("election:\n%s", out)
	}

	// The majority gone: no election can succeed.
	v = threeVoters(now)
	kill(&v, 1, 2)
	for w, want := range map[int]string{
		160: "no leader: 1 of 3 voters running, a majority needs 2: no election can succeed until 1 more runs",
		80:  "1 of 3 voters running, a majority needs 2: no election can succeed",
	} {
		if out := render(&v, w); !strings.Contains(out, want) {
			t.Errorf("at %d columns, no %q:\n%s", w, want, out)
		}
	}

	// With a leader, no such line.
	v = threeVoters(now)
	if out := render(&v, 80); strings.Contains(out, "no leader") || strings.Contains(out, "election") {
		t.Errorf("with a leader:\n%s", out)
	}
}

// An API that went quiet stays listed as idle for a while, then leaves.
func TestFlowIdleRowsFadeOut(t *testing.T) {
	var f flowModel
	at := int64(1_000_000)
	add := func(ms int64, votes int64) string {
		v := threeVoters(at + ms)
		v.Links = []view.Link{
			{From: 2, To: 1, RPC: map[string]view.RPCStats{"Fetch": {Requests: ms / 50}}},
			{From: 1, To: 2, RPC: map[string]view.RPCStats{"Vote": {Requests: votes}}},
		}
		f.add(&v)
		return strings.Join(f.view(DefaultStyles(), &v, 100, 10), "\n")
	}
	add(0, 0)
	add(100, 1) // one vote, then quiet
	var out string
	for ms := int64(200); ms <= 9_000; ms += 100 {
		out = add(ms, 1)
	}
	if !strings.Contains(out, "Vote/PreVote    1→2       idle last 8.9s ago") {
		t.Fatalf("the quiet Vote row is gone too soon:\n%s", out)
	}
	for ms := int64(9_100); ms <= 10_200; ms += 100 {
		out = add(ms, 1)
	}
	if strings.Contains(out, "Vote/PreVote") || !strings.Contains(out, "Fetch") {
		t.Fatalf("after %v of quiet:\n%s", recentWindow, out)
	}
}

// A commit picture too short for every voter names those left out,
// keeping the one that holds the HWM in sight.
func TestCommitPictureSaysWhoIsLeftOut(t *testing.T) {
	v := threeVoters(1_000_000)
	out := strings.Join(commitModel{}.view(DefaultStyles(), &v, 100, 3), "\n")
	if !strings.Contains(out, "110 ← holds the HWM") || !strings.Contains(out, "+2 more: voter 1,3") {
		t.Fatalf("no line for the voters left out:\n%s", out)
	}
	out = strings.Join(commitModel{}.view(DefaultStyles(), &v, 100, 4), "\n")
	if strings.Contains(out, "more") || !strings.Contains(out, "95 behind the HWM") {
		t.Fatalf("short picture:\n%s", out)
	}
}

func TestCommitPictureWithoutMajority(t *testing.T) {
	v := threeVoters(1_000_000)
	for _, i := range []int{0, 1} {
		v.Nodes[i].State, v.Nodes[i].Role = view.StateKilled, ""
	}
	v.Derive(time.UnixMilli(v.Timestamp), nil)
	out := strings.Join(commitModel{}.view(DefaultStyles(), &v, 100, 10), "\n")
	if !strings.Contains(out, "1 of 3 voters running, no majority") || strings.Contains(out, "until an election ends") {
		t.Fatalf("no-majority picture:\n%s", out)
	}
}

// A follower of the leader a record ahead of it is two statuses published
// a moment apart, not an uncommitted tail.
func TestQuorumFollowerAheadIsSkew(t *testing.T) {
	v := threeVoters(1_000_000)
	v.Nodes[1].LogEndOffset = 121
	v.Derive(time.UnixMilli(v.Timestamp), nil)
	table := strings.Join(quorumModel{selected: 1}.view(DefaultStyles(), &v, 160, 10, -1).lines, "\n")
	if strings.Contains(table, "uncommitted") {
		t.Fatalf("skew shown as an uncommitted tail:\n%s", table)
	}
}

// The header names a push quorum, and on 80 columns it does so without
// growing a line: the uptime and cluster ID give way to it.
func TestHeaderNamesPushQuorum(t *testing.T) {
	st := DefaultStyles()
	now := int64(1_000_000)
	h := headerModel{started: time.UnixMilli(now - 65_000)}
	v := threeVoters(now)
	v.ClusterID, v.Profile = "EDo1_i8B7LGeBo-Ff2DCgw", "fast"
	v.HighWatermark = 123456
	pull := h.view(st, &v, false, 80)
	if s := strings.Join(pull, "\n"); strings.Contains(s, "quorum") {
		t.Errorf("a pull header names the quorum's mode:\n%s", s)
	}
	v.Settings = map[string]string{view.ReplicationKey: "push"}
	for _, w := range []int{80, 160} {
		out := h.view(st, &v, false, w)
		s := strings.Join(out, "\n")
		if !strings.Contains(s, "quorum push") || !strings.Contains(s, "leader 1") || !strings.Contains(s, "profile fast") {
			t.Errorf("at %d columns, no quorum push, leader or profile:\n%s", w, s)
		}
		if w == 160 && !strings.Contains(s, "up 1m05s") {
			t.Errorf("at 160 columns the uptime gave way though there is room:\n%s", s)
		}
		if w == 80 && len(out) != len(pull) {
			t.Errorf("at 80 columns the push header has %d lines, the pull one %d:\n%s", len(out), len(pull), s)
		}
		for _, l := range out {
			if lipgloss.Width(l) > w {
				t.Errorf("header line wider than %d: %q", w, l)
			}
		}
	}
}

// The flow panel says who starts each exchange, by the quorum's mode, and
// what a commit costs in the quorum's requests: a broker's Fetch from a
// broker is the data plane's and does not count.
func TestFlowSaysWhoStartsEachExchange(t *testing.T) {
	at := int64(1_000_000)
	for _, tc := range []struct {
		push       bool
		api        string
		from, to   int32
		wantStarts string
	}{
		{false, "Fetch", 2, 1, "pull: the follower asks (Fetch follower → leader) · 2.0 requests/record"},
		{true, "AppendEntries", 1, 2, "push: the leader sends (AppendEntries leader → follower) · 2.0 requests/record"},
	} {
		var f flowModel
		var v view.View
		for i := range 11 { // 100ms apart: 20 requests and 10 records a second
			v = threeVoters(at + int64(i)*100)
			v.Nodes = append(v.Nodes, view.Node{ID: 101, Kind: view.KindBroker, State: view.StateRunning}, view.Node{ID: 102, Kind: view.KindBroker, State: view.StateRunning})
			if tc.push {
				v.Settings = map[string]string{view.ReplicationKey: "push"}
			}
			v.HighWatermark = 100 + int64(i)
			v.Links = []view.Link{
				{From: tc.from, To: tc.to, RPC: map[string]view.RPCStats{tc.api: {Requests: int64(2 * i)}}},
				{From: 102, To: 101, RPC: map[string]view.RPCStats{"Fetch": {Requests: int64(50 * i)}}},
			}
			f.add(&v)
		}
		out := strings.Join(f.view(DefaultStyles(), &v, 140, 10), "\n")
		if !strings.Contains(out, tc.wantStarts) {
			t.Errorf("no %q in:\n%s", tc.wantStarts, out)
		}
		if short := strings.Join(f.view(DefaultStyles(), &v, 140, 3), "\n"); strings.Contains(short, "requests/record") {
			t.Errorf("a 3-line panel gives a line to who starts:\n%s", short)
		}
	}
}
