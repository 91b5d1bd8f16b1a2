package condition

import (
	"slices"
	"strings"
	"testing"
)

// Every row of the table is whole: its example is a condition of its own
// form in canonical spelling, Forms has a line for it, and its keywords
// stand where the parser looks for them (before any optional word).
func TestEveryFormIsWhole(t *testing.T) {
	var lines []string // the spellings Forms lists
	for _, l := range strings.Split(Forms, "\n") {
		if len(l) > 33 && l[:2] == "  " && l[2] != ' ' {
			lines = append(lines, strings.Split(strings.TrimSpace(l[:33]), " | ")...)
		}
	}
	for i := range forms {
		f := &forms[i]
		text := f.example
		if text == "" {
			text = f.spellings(false, false, nil)[0]
		}
		c, err := Parse(text)
		switch {
		case err != nil && f.example != "":
			t.Errorf("%s: example %q: %v", f.word, text, err)
		case err == nil && c.form != f:
			t.Errorf("%s: %q parses as another form, %q", f.word, text, c.form.spellings(false, false, nil))
		case err == nil && f.example != "" && c.String() != f.example:
			t.Errorf("%s: example %q is not canonical: %q", f.word, f.example, c)
		}
		for _, s := range f.spellings(true, false, nil) {
			if !slices.Contains(lines, s) {
				t.Errorf("Forms has no line for %q", s)
			}
		}
		optional := false
		for _, a := range f.args {
			if a.keyword && optional {
				t.Errorf("%s: keyword %q follows an optional word", f.word, a.help)
			}
			optional = optional || a.optional
		}
	}
	if forms[0].help == "" {
		t.Error("the first form shares a line with none before it")
	}
}

// The help of every line of Forms starts in one column.
func TestFormsLinesAlign(t *testing.T) {
	for _, line := range strings.Split(Forms, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break // the notes after the forms
		}
		if !strings.HasPrefix(line[2:], " ") && (len(line) < 34 || line[32] != ' ' || line[33] == ' ') {
			t.Errorf("help not at column 33: %q", line)
		}
	}
}

// A keyword picks its form over one that has a free word in its place:
// node NODE state is not node NODE FIELD.
func TestKeywordPicksTheForm(t *testing.T) {
	for in, want := range map[string]string{
		"node 102 state":               "want node NODE state [!=] STATE, STATE one of running killed",
		"node 1 role != Leader x":      "want node NODE role [!=] ROLE",
		"node 1 lag":                   "want node NODE lag OP V",
		"hwm orders-0 > 5 6":           "want hwm OP V (the metadata log's) or hwm TOPIC-P OP V (a partition's)",
		"topic orders on some brokers": "want topic T on all brokers, e.g. topic orders on all brokers",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want it to say %q", in, err, want)
		}
	}
	if !slices.Equal(words()[:3], []string{"leader", "new-leader", "epoch"}) {
		t.Errorf("words() = %v", words())
	}
}
