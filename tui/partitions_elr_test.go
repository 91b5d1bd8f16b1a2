package tui

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// A partition whose ISR emptied into the ELR (KIP-966) marks its eligible
// leaders with a diamond and its last known leader with a caret, and the
// legend then explains both.
func TestPartitionsPanelMarksEligibleLeaders(t *testing.T) {
	v := replicationView(1_000_000)
	p := &v.Topics[0].Partitions[0]
	p.Leader, p.Isr, p.Elr, p.LastKnownElr = view.NoLeader, []int32{}, []int32{101, 102}, []int32{101}
	var m partitionsModel
	m.add(&v)
	out := partitionsText(&m, &v, 100, 12)
	for _, want := range []string{
		"orders-0       2 offline ^◇101 120         ◇102 90           ✗103 down",
		"◇ eligible leader (ELR)  ^ last known leader",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("partitions panel lacks %q:\n%s", want, out)
		}
	}
	// Without an ELR anywhere, the legend stays as it was.
	v = replicationView(1_000_000)
	if out := partitionsText(&m, &v, 100, 12); strings.Contains(out, "ELR") {
		t.Errorf("an ELR legend without an ELR:\n%s", out)
	}
}
