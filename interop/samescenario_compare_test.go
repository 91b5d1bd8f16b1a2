package interop

import (
	"slices"
	"strings"
	"testing"
)

func TestCompareStepsFailsOnlyOnUnknownDifferences(t *testing.T) {
	kraftlab := map[string][]fact{
		"start":   {{key: "quorum leader", value: "L0"}, {key: "quorum epoch", value: "E0"}},
		"L0 gone": {{key: "quorum epoch", value: "E1"}, {key: "isr", value: "P1,P0"}, {key: "to new leader", value: "2.0s", notCompared: "timing"}, {key: "only here", value: "x"}},
	}
	kafka := map[string][]fact{
		"start":   {{key: "quorum leader", value: "L0"}, {key: "quorum epoch", value: "E0"}},
		"L0 gone": {{key: "quorum epoch", value: epochBoth}, {key: "isr", value: "P0,P1"}, {key: "to new leader", value: "3.1s", notCompared: "timing"}},
	}
	known := []knownDifference{{scenario: "s", step: "L0 gone", key: "isr", kraftlab: "P1,P0", kafka: "P0,P1", row: "Builds the ISR"}}
	table, unexpected := compareSteps("s", []string{"start", "L0 gone"}, kraftlab, kafka, known)
	t.Logf("\n%s", table)
	// E1 matches E1=E0+1; the known ISR order and the timing pass; the
	// fact Kafka lacks is the one unexpected difference, named by its step.
	if want := []string{"s\tL0 gone\tonly here\tx\t-"}; !slices.Equal(unexpected, want) {
		t.Errorf("unexpected = %q, want %q", unexpected, want)
	}
	for _, want := range []string{"KNOWN: Builds the ISR", "(not compared: timing)", "DIFFERENT"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if strings.Count(table, "L0 gone") != 1 {
		t.Errorf("the step's name should head its first row only:\n%s", table)
	}
}

func TestSameValueTakesAnEpochThatIsBothE1AndE0Plus1(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{epochBoth, "E1", true},
		{"leaderEpoch E0+1", "leaderEpoch " + epochBoth, true},
		{"E1", "E0+1", false}, // E1 after a split vote is E0+2
		{"E0", epochBoth, false},
	} {
		if got := sameValue(c.a, c.b); got != c.same {
			t.Errorf("sameValue(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// Every known difference names a row of docs/design.md's differences
// table (readKnownDifferences fails the test otherwise), with or without
// Java here.
func TestKnownDifferencesNameDesignRows(t *testing.T) {
	if len(readKnownDifferences(t)) == 0 {
		t.Log("no known differences listed")
	}
}
