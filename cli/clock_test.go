package cli

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
)

// Clock lines are scenario lines; a wrong one is refused when the file is
// checked, before anything runs, with what it wants.
func TestClockLines(t *testing.T) {
	e := newHarness(t).env(&lockedBuffer{}, &lockedBuffer{})
	for _, line := range []string{"clock", "clock pause", "clock resume", "clock slow 10", "clock slow 1", "clock advance 250ms", "clock advance 2s"} {
		if err := e.checkLine(strings.Fields(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	for line, want := range map[string]string{
		"clock rewind":        "want pause, resume, slow N or advance DURATION",
		"clock pause now":     "clock pause takes no argument",
		"clock slow":          "want clock slow N",
		"clock slow 0":        "from 1 (normal speed) to 1000",
		"clock slow 1001":     "from 1 (normal speed) to 1000",
		"clock slow x":        "from 1 (normal speed) to 1000",
		"clock advance":       "want clock advance DURATION",
		"clock advance -1s":   "unknown shorthand flag",
		"clock advance 1us":   "from 1ms to 24h0m0s",
		"clock advance 2":     "from 1ms to 24h0m0s",
		"clock advance 1s 2s": "want clock advance DURATION",
		"clock advance 1000h": "from 1ms to 24h0m0s",
	} {
		err := e.checkLine(strings.Fields(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
	a, err := clockAction([]string{"advance", "1500ms"})
	if err != nil || a.Clock != cluster.ClockAdvance || a.AdvanceMs != 1500 || a.String() != "clock advance 1.5s" {
		t.Fatalf("advance 1500ms: %+v %v (%s)", a, err, a)
	}
	if a, _ := clockAction([]string{"slow", "4"}); a.String() != "clock slow 4" {
		t.Fatalf("slow 4 spelled %q", a)
	}
}
