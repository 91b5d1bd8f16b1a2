package cli

import (
	"strings"
	"testing"
)

// messages, step and drop are scenario lines; a wrong one is refused when
// the file is checked, with what it wants.
func TestMessageLines(t *testing.T) {
	e := newHarness(t).env(&lockedBuffer{}, &lockedBuffer{})
	for _, line := range []string{"messages", "messages --api Fetch --response --json", "step", "step --api Fetch --from 2 --to 1",
		"step --all", "step --id 7", "step --from leader --request", "drop", "drop --api Fetch --response --from 1 --to 2"} {
		if err := e.checkLine(strings.Fields(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	for line, want := range map[string]string{
		"step 2":                    "takes flags only",
		"step --all --api Fetch":    "takes no filter",
		"drop --all":                "unknown flag: --all",
		"step --request --response": "exclude each other",
		"messages --from nowhere":   "--from nowhere",
		"drop --to 1 --to":          "needs an argument",
	} {
		err := e.checkLine(strings.Fields(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}
