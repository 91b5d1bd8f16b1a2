package condition

import (
	"errors"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

func TestParseNodeRef(t *testing.T) {
	for in, want := range map[string]string{"1": "1", "101": "101", "leader": "leader", "LEADER": "leader", "old-leader": "old-leader", "0": "0"} {
		r, err := ParseNodeRef(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseNodeRef(%q) = %q, %v; want %q", in, r, err, want)
		}
	}
	for _, in := range []string{"", "-1", "x", "1.5", "2147483648", "leaders"} {
		if _, err := ParseNodeRef(in); err == nil || !strings.Contains(err.Error(), "want a node ID") {
			t.Errorf("ParseNodeRef(%q) = %v", in, err)
		}
	}
}

func TestResolveNodeRef(t *testing.T) {
	v := derived(engineView(), nil)
	mustParse := func(s string) NodeRef {
		r, err := ParseNodeRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if id, err := mustParse("leader").Resolve(&v); err != nil || id != 2 {
		t.Errorf("leader = %d, %v", id, err)
	}
	if id, err := mustParse("101").Resolve(&v); err != nil || id != 101 {
		t.Errorf("101 = %d, %v", id, err)
	}
	if _, err := mustParse("7").Resolve(&v); !errors.Is(err, ErrUnknownNode) || err.Error() != "unknown node 7 (nodes: 1, 2, 3, 101, 102)" {
		t.Errorf("7 = %v", err)
	}
	if _, err := mustParse("old-leader").Resolve(&v); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("old-leader without baseline = %v", err)
	}
	v.Baseline = &view.Baseline{Action: "isolate", LeaderID: 1}
	if id, err := mustParse("old-leader").Resolve(&v); err != nil || id != 1 {
		t.Errorf("old-leader = %d, %v", id, err)
	}
	v.Baseline.LeaderID = view.NoLeader
	if _, err := mustParse("old-leader").Resolve(&v); !errors.Is(err, ErrNoLeader) || !strings.Contains(err.Error(), "before the last isolate") {
		t.Errorf("old-leader with no leader then = %v", err)
	}
	v.LeaderID = view.NoLeader
	if _, err := mustParse("leader").Resolve(&v); !errors.Is(err, ErrNoLeader) {
		t.Errorf("leader with none = %v", err)
	}
	if _, err := (NodeRef{}).Resolve(&v); err == nil {
		t.Error("zero ref resolved")
	}
}
