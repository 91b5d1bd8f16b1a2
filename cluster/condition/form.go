package condition

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// A form is one condition of the language: the words it is written
// with, how it reads a view, and its line of Forms. The table of them is
// forms.
type form struct {
	word    string // its first word
	args    []arg  // the words after it
	note    string // tells it from the other forms of its word, in errors
	example string // a condition of this form, for errors
	help    string // its line of Forms after the words; "" shares the line above
	eval    evalFunc
}

// An evalFunc reads a view for a condition: see Condition.Eval.
type evalFunc func(c Condition, v *view.View) (ok bool, saw string, err error)

// formsOf returns the forms whose first word is word.
func formsOf(word string) []*form {
	var out []*form
	for i := range forms {
		if forms[i].word == word {
			out = append(out, &forms[i])
		}
	}
	return out
}

// words returns the first words of the forms, each once.
func words() []string {
	var out []string
	for _, f := range forms {
		if !slices.Contains(out, f.word) {
			out = append(out, f.word)
		}
	}
	return out
}

// keywords counts the keywords of f that got, the words after the
// first, has; -1 if it has another word in place of one.
func (f *form) keywords(got []string) int {
	n := 0
	for i, a := range f.args {
		switch {
		case a.optional || i >= len(got):
			return n
		case a.keyword && !strings.EqualFold(got[i], a.help):
			return -1
		case a.keyword:
			n++
		}
	}
	return n
}

// fits tells whether f takes n words after its first.
func (f *form) fits(n int) bool {
	optional := 0
	for _, a := range f.args {
		if a.optional {
			optional++
		}
	}
	return n >= len(f.args)-optional && n <= len(f.args)
}

// parse reads got, which fits f, into a Condition; read counts the
// arguments it read before an error.
func (f *form) parse(got []string) (c Condition, read int, err error) {
	c.form = f
	leaveOut := len(got) < len(f.args)
	for _, a := range f.args {
		if a.optional && leaveOut {
			continue
		}
		if a.parse != nil {
			if err := a.parse(&c, got[read]); err != nil {
				return Condition{}, read, err
			}
		}
		read++
	}
	return c, read, nil
}

// chosen returns the value of f's argument i that got, the words a user
// wrote after the first, chose; for a word whose place is sure (before
// any optional one).
func (f *form) chosen(i int, got []string) (string, bool) {
	for _, a := range f.args[:i] {
		if a.optional {
			return "", false
		}
	}
	if a := f.args[i]; a.values != nil && !a.spelled && i < len(got) {
		return a.choice(got[i])
	}
	return "", false
}

// spellings are the ways Forms (help) or errors write f: one, or one for
// each value of a spelled-out argument. short leaves optional words out;
// got stands the values a user chose in for their names.
func (f *form) spellings(help, short bool, got []string) []string {
	alts := []string{f.word}
	for i, a := range f.args {
		names := []string{a.usage}
		if help {
			names[0] = a.help
		}
		if v, ok := f.chosen(i, got); ok {
			names[0] = v
		}
		switch {
		case a.optional && short:
			continue
		case a.spelled:
			names = a.values
		}
		var next []string
		for _, s := range alts {
			for _, n := range names {
				next = append(next, s+" "+n)
			}
		}
		alts = next
	}
	return alts
}

// usage says how to write fs for an error: all of one form, with the
// values its arguments take and an example, or the shortest spelling of
// each of several.
func usage(fs []*form, got []string) string {
	if len(fs) > 1 {
		var alts []string
		for _, f := range fs {
			for _, s := range f.spellings(false, true, nil) {
				alts = append(alts, strings.TrimSpace(s+" "+f.note))
			}
		}
		return orList(alts)
	}
	f := fs[0]
	s := strings.TrimSpace(orList(f.spellings(false, false, got)) + " " + f.note)
	for i, a := range f.args {
		if _, ok := f.chosen(i, got); !ok && a.values != nil && !a.spelled {
			s += fmt.Sprintf(", %s one of %s", a.usage, strings.Join(a.values, " "))
		}
	}
	if f.example != "" {
		s += ", e.g. " + f.example
	}
	return s
}

// orList joins a, b and c as "a, b or c".
func orList(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// formsText lays the forms out for Forms: each line's spellings, joined
// by |, then its help.
func formsText() string {
	type line struct {
		syntax []string
		help   string
	}
	var lines []line
	for i := range forms {
		f := &forms[i]
		syntax := f.spellings(true, false, nil)
		if f.help == "" {
			lines[len(lines)-1].syntax = append(lines[len(lines)-1].syntax, syntax...)
			continue
		}
		lines = append(lines, line{syntax, f.help})
	}
	var b strings.Builder
	for _, l := range lines {
		help := strings.ReplaceAll(l.help, "\n", "\n"+strings.Repeat(" ", 33))
		fmt.Fprintf(&b, "  %-30s %s\n", strings.Join(l.syntax, " | "), help)
	}
	return b.String()
}

// choices is the help of an argument that is one of a few words.
func choices(a arg) string { return a.usage + ": " + strings.Join(a.values, " ") }
