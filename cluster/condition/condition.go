package condition

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/closest"
)

// Condition is a parsed wait/expect condition. Evaluating it is a pure
// function of a view.View.
type Condition struct {
	form  *form // the row of forms it was written in
	node  NodeRef
	op    op
	value operand
	field string // a role, state or node field, or a topic
	tp    view.TopicPartition
}

// Parse parses a condition; the words may come as one string or
// as shell arguments joined by spaces. Operators need no spaces around them.
func Parse(text string) (Condition, error) {
	toks := lexCondition(text)
	c, near, err := parseTokens(toks)
	if err != nil {
		return Condition{}, fmt.Errorf("bad condition %q: %v; closest form: %s", strings.Join(toks, " "), err, closestForm(near, toks))
	}
	return c, nil
}

// lexCondition splits on spaces and around comparison operators. A run
// of operator characters is one token, as typed, so that a mistyped
// operator (>>, =>) is named as it was written.
func lexCondition(s string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			flush()
		case strings.IndexByte(opChars, ch) >= 0:
			flush()
			j := i + 1
			for j < len(s) && strings.IndexByte(opChars, s[j]) >= 0 {
				j++
			}
			toks = append(toks, s[i:j])
			i = j - 1
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return toks
}

// opChars are the characters comparison operators are made of.
const opChars = "=!<>"

// parseTokens reads t as the form of its first word that it fits. On an
// error, near are the forms t came closest to.
func parseTokens(t []string) (c Condition, near []*form, err error) {
	if len(t) == 0 {
		return Condition{}, nil, errors.New("empty condition")
	}
	word, got := strings.ToLower(t[0]), t[1:]
	all := formsOf(word)
	if all == nil {
		return Condition{}, formsOf(nearestWord(word)), fmt.Errorf("unknown condition %q", t[0])
	}
	// Keywords pick among the forms of a word, those with the most first
	// (node 1 role before node 1 FIELD); among them the count of words
	// does (hwm OP V, hwm T-P OP V). The error is of the form that read
	// furthest.
	var keyed []*form
	most := 0
	for _, f := range all {
		switch n := f.keywords(got); {
		case n > most:
			keyed, most = []*form{f}, n
		case n == most:
			keyed = append(keyed, f)
		}
	}
	best, bestRead := (*form)(nil), -1
	for _, f := range keyed {
		if !f.fits(len(got)) {
			continue
		}
		c, read, ferr := f.parse(got)
		if ferr == nil {
			return c, nil, nil
		}
		if read > bestRead {
			best, bestRead, err = f, read, ferr
		}
	}
	if best != nil {
		return Condition{}, []*form{best}, err
	}
	if keyed == nil {
		keyed = all
	}
	if len(all) == 1 && len(all[0].args) == 0 {
		return Condition{}, keyed, fmt.Errorf("%s takes no arguments", word)
	}
	return Condition{}, keyed, fmt.Errorf("want %s", usage(keyed, got))
}

// closestForm names the forms a bad condition was most likely meant to
// be: those of its first word, or of the condition word nearest to it.
func closestForm(near []*form, t []string) string {
	switch {
	case len(t) == 0:
		return "leader (every form: the help of wait)"
	case near == nil:
		return "none; a condition starts with one of " + strings.Join(words(), ", ")
	}
	return usage(near, t[1:])
}

// nearestWord is the condition word at most 2 edits from word, the
// nearest; "" when there is none.
func nearestWord(word string) string {
	best, bestDist := "", 3
	for _, w := range words() {
		if d := closest.Distance(word, w); d < bestDist {
			best, bestDist = w, d
		}
	}
	return best
}

// Nodes returns the node references the condition names, for checking
// them before it runs.
func (c Condition) Nodes() []NodeRef {
	if c.node.IsZero() {
		return nil
	}
	return []NodeRef{c.node}
}

// String returns the condition in its canonical spelling.
func (c Condition) String() string {
	if c.form == nil {
		return ""
	}
	words := []string{c.form.word}
	for _, a := range c.form.args {
		if w := a.spell(c); w != "" {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

// Eval evaluates the condition against v. ok tells whether it holds; saw
// says what it looked at, for progress and failure messages. err is set
// when the condition cannot be evaluated at all (an unknown node, no
// baseline yet): waiting longer would not help.
func (c Condition) Eval(v *view.View) (ok bool, saw string, err error) {
	if c.form == nil {
		return false, "", errors.New("no condition to evaluate")
	}
	return c.form.eval(c, v)
}

// is tells whether the word c names (a role or state) is s, or with !=
// is not.
func (c Condition) is(s string) bool { return (s == c.field) == (c.op != opNe) }

// want returns V: the number, or base's value of the baseline plus it.
func (c Condition) want(v *view.View, base func(*view.Baseline) int64) (int64, error) {
	if !c.value.baseline {
		return c.value.n, nil
	}
	if v.Baseline == nil {
		return 0, fmt.Errorf("%w: baseline is recorded by kill, stop, isolate, resign, wipe, disk or mark", ErrNoBaseline)
	}
	return base(v.Baseline) + c.value.n, nil
}

// The baseline's values an operand can add to: the epoch, and the high
// watermark that hwm and log-end compare with (what was committed).
func baseEpoch(b *view.Baseline) int64 { return int64(b.LeaderEpoch) }
func baseHWM(b *view.Baseline) int64   { return b.HighWatermark }
