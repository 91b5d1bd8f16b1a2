package condition

import (
	"errors"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func TestParseConditionCanonical(t *testing.T) {
	cases := map[string]string{
		"leader":                            "leader",
		"  leader  ":                        "leader",
		"leader != 2":                       "leader != 2",
		"leader!=2":                         "leader != 2",
		"leader = 3":                        "leader == 3",
		"leader == old-leader":              "leader == old-leader",
		"new-leader":                        "new-leader",
		"epoch > 3":                         "epoch > 3",
		"epoch>=baseline":                   "epoch >= baseline",
		"hwm >= baseline+5":                 "hwm >= baseline+5",
		"hwm<baseline-2":                    "hwm < baseline-2",
		"hwm >= 100":                        "hwm >= 100",
		"caught-up":                         "caught-up",
		"node 3 role follower":              "node 3 role Follower",
		"node leader role Leader":           "node leader role Leader",
		"node old-leader state Isolated":    "node old-leader state isolated",
		"node 3 lag >= 5":                   "node 3 lag >= 5",
		"node old-leader epoch == baseline": "node old-leader epoch == baseline",
		"node 2 snapshots-loaded>=1":        "node 2 snapshots-loaded >= 1",
		"node 2 log-start > 0":              "node 2 log-start > 0",
	}
	for in, want := range cases {
		c, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if c.String() != want {
			t.Errorf("Parse(%q) = %q, want %q", in, c, want)
		}
		if again, err := Parse(c.String()); err != nil || again != c {
			t.Errorf("canonical form %q does not parse back to the same condition: %v", c, err)
		}
	}
}

func TestParseConditionErrors(t *testing.T) {
	cases := map[string]string{
		"":                      "empty condition",
		"leder":                 `unknown condition "leder"`,
		"leader > 2":            `bad operator ">": want one of == !=`,
		"leader != leader":      "not leader",
		"leader != x":           `bad node "x"`,
		"leader != -1":          `bad node "-1"`,
		"leader 2":              "want leader, leader == N or leader != N",
		"new-leader 3":          "new-leader takes no arguments",
		"epoch":                 "want epoch OP V",
		"epoch ~ 3":             `bad operator "~"`,
		"epoch >> 3":            `bad condition "epoch >> 3": bad operator ">>": want one of == != > >= < <= (did you mean >?)`,
		"hwm>>5":                `bad condition "hwm >> 5": bad operator ">>"`,
		"hwm => 5":              `bad operator "=>": want one of == != > >= < <= (did you mean >=?)`,
		"leader <> 2":           `bad operator "<>": want one of == != (did you mean !=?)`,
		"leader >= 2":           `bad operator ">=": want one of == !=;`,
		"epoch > three":         `bad value "three": want a number, baseline or baseline+K`,
		"hwm > baseline*2":      `bad value "baseline*2"`,
		"node 1":                "want node NODE role ROLE",
		"node x role Leader":    `bad node "x"`,
		"node 1 role King":      `unknown role "King"; want one of Leader, Follower`,
		"node 1 state sleeping": `unknown state "sleeping"; want one of running, killed, stopped, isolated`,
		"node 1 color == 3":     `unknown node field "color"`,
		"node 1 lag > baseline": "baseline only compares with epoch, hwm and log-end",
		"node 1 role > Leader":  `bad operator ">": want one of == !=`,
		"node 1 role != ":       `unknown role "!="`,
		"node 1 lag 5":          "want node NODE lag OP V",
	}
	for in, want := range cases {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q): no error", in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) {
			t.Errorf("Parse(%q) = %q, want it to say %q", in, msg, want)
		}
		if !strings.Contains(msg, "; closest form: ") || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q) error %q is not one line naming the closest form", in, msg)
		}
	}
}

func TestParseErrorNamesTheClosestForm(t *testing.T) {
	cases := map[string]string{
		"leder":             "closest form: leader, leader == N or leader != N",
		"epoc > 3":          "closest form: epoch OP V",
		"hwn >= 5":          "closest form: hwm OP V",
		"node 1 role King":  "closest form: node NODE role [!=] ROLE, ROLE one of Leader",
		"node 1 color == 3": "closest form: node NODE FIELD OP V, FIELD one of epoch",
		"banana":            "closest form: none; a condition starts with one of leader, new-leader",
		"caughtup":          "closest form: caught-up",
	}
	for in, want := range cases {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want it to say %q", in, err, want)
		}
	}
}

func mustCond(t *testing.T, s string) Condition {
	t.Helper()
	c, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEvalAgainstViews(t *testing.T) {
	base := &view.Baseline{Action: "kill", NodeID: 1, LeaderID: 1, LeaderEpoch: 4, HighWatermark: 90}
	v := derived(engineView(), base)
	noLeader := engineView()
	noLeader.Nodes[2].Role = view.RoleCandidate
	noLeader = derived(noLeader, base)

	cases := []struct {
		cond string
		view view.View
		ok   bool
		saw  string
	}{
		{"leader", v, true, "leader 2 in epoch 5, hwm 100"},
		{"leader", noLeader, false, "no leader (1 Follower e5, 2 Candidate e5, 3 Follower e5)"},
		{"leader != 1", v, true, "leader 2"},
		{"leader != 2", v, false, "leader 2"},
		{"leader == 2", v, true, ""},
		{"leader != 1", noLeader, false, "no leader"},
		{"leader != old-leader", v, true, ""},
		{"new-leader", v, true, "baseline epoch 4 (before kill of node 1)"},
		{"new-leader", noLeader, false, "no leader"},
		{"epoch > 4", v, true, "epoch 5 (want > 4)"},
		{"epoch == baseline+1", v, true, "want == 5"},
		{"epoch > 5", v, false, ""},
		{"epoch < 9", noLeader, false, "no leader"},
		{"hwm >= baseline+10", v, true, "hwm 100 (want >= 100)"},
		{"hwm > 100", v, false, ""},
		{"caught-up", v, false, "behind: node 3 at 95"},
		{"node 3 role Follower", v, true, "node 3 is Follower in epoch 5"},
		{"node leader role Leader", v, true, ""},
		{"node leader role Leader", noLeader, false, "no leader"},
		{"node old-leader role Follower", v, true, "node 1"},
		{"node old-leader role != Leader", v, true, "node 1"},
		{"node leader role != Leader", v, false, ""},
		{"node 102 state != running", v, true, ""},
		{"node 1 log-end > baseline", v, true, ""},
		{"node 3 log-end > baseline+5", v, false, "node 3 log-end 95 (want > 95)"},
		{"node 102 state killed", v, true, "node 102 is killed"},
		{"node 102 state running", v, false, ""},
		{"node 3 lag >= 5", v, true, "node 3 lag 5"},
		{"node 3 lag > 5", v, false, ""},
		{"node 102 lag > 0", v, false, "node 102 has no lag"},
		{"node 3 log-end == 95", v, true, ""},
		{"node 3 epoch == baseline+1", v, true, ""},
		{"node 1 hwm >= baseline", v, true, ""},
		{"node 1 truncations == 0", v, true, ""},
	}
	for _, tc := range cases {
		ok, saw, err := mustCond(t, tc.cond).Eval(&tc.view)
		if err != nil {
			t.Errorf("%s: %v", tc.cond, err)
			continue
		}
		if ok != tc.ok || !strings.Contains(saw, tc.saw) {
			t.Errorf("%s = %t (%q); want %t, saw containing %q", tc.cond, ok, saw, tc.ok, tc.saw)
		}
	}

	caught := engineView()
	caught.Nodes[0].LogEndOffset = 100
	caught = derived(caught, nil)
	if ok, saw, _ := mustCond(t, "caught-up").Eval(&caught); !ok || saw != "3 running voters and 1 brokers at leader 2's log end 100" {
		t.Errorf("caught-up = %t, %q", ok, saw)
	}
}

func TestEvalErrors(t *testing.T) {
	v := derived(engineView(), nil)
	cases := []struct {
		cond string
		err  error
		msg  string
	}{
		{"new-leader", ErrNoBaseline, "new-leader compares with the epoch before the last kill"},
		{"hwm > baseline", ErrNoBaseline, "baseline is recorded by kill"},
		{"node old-leader role Leader", ErrNoBaseline, "there was no kill, stop, isolate, resign, wipe, disk or mark yet"},
		{"node 7 role Leader", ErrUnknownNode, "unknown node 7 (nodes: 1, 2, 3, 101, 102)"},
		{"leader != 9", ErrUnknownNode, "unknown node 9"},
	}
	for _, tc := range cases {
		ok, _, err := mustCond(t, tc.cond).Eval(&v)
		if ok || !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s = %t, %v; want %v saying %q", tc.cond, ok, err, tc.err, tc.msg)
		}
	}
}
