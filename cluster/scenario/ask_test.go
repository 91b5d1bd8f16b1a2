package scenario

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseAsk(t *testing.T) {
	a, err := ParseAsk([]string{"ask", "Who", "leads?", "|", "node", "1", "|", "a new leader|nobody", "=>", "2"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Ask{Question: "Who leads?", Choices: []string{"node 1", "a new leader", "nobody"}, Answer: 2}
	if !reflect.DeepEqual(a, want) || a.Right() != "2) a new leader" {
		t.Errorf("got %+v", a)
	}
	for line, msg := range map[string]string{
		"ask Who? | one => 1":        "at least two choices",
		"ask Who? | one | two":       "the right answer at its end, => N",
		"ask Who? | one | two => 3":  "the answer => 3 is not one of the choices 1..2",
		"ask Who? | one | two => 0":  "is not one of the choices",
		"ask Who? | one | two => x":  `"x" after => is not a choice number`,
		"ask | one | two => 1":       "needs a question",
		"ask Who? | one || two => 1": "choice 2 is empty",
	} {
		args, _ := Split(line)
		if _, err := ParseAsk(args); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", line, err, msg)
		}
	}
}

// Bad ask lines are errors at their line; good ones never reach the
// CLI's check.
func TestAskLinesAreChecked(t *testing.T) {
	s, err := Parse("a.txt", strings.NewReader("wait leader\nask Q | a => 1\nask Q | a | b => 1\nask Q | a | b => 5\n"))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 || errs[0].Error() != "a.txt:2: ask needs at least two choices, each after a | (want: ask QUESTION | CHOICE | CHOICE [| ...] => N)" ||
		!strings.HasPrefix(errs[1].Error(), "a.txt:4: ask: the answer => 5") {
		t.Fatalf("errors: %v", err)
	}
	var checked []string
	s.Validate(func(args []string) error { checked = append(checked, args[0]); return nil })
	if !reflect.DeepEqual(checked, []string{"wait"}) {
		t.Errorf("checked %q", checked)
	}
}

const asking = `wait leader
ask What happens when the leader dies? | nothing | a new leader is elected => 2
kill leader
wait new-leader
say The majority elected a new leader
status
`

func linesFrom(in string) func(context.Context) (string, error) {
	lines := strings.SplitAfter(in, "\n")
	return func(context.Context) (string, error) {
		if len(lines) == 0 || !strings.HasSuffix(lines[0], "\n") {
			return "", errors.New("standard input ended")
		}
		l := lines[0]
		lines = lines[1:]
		return l, nil
	}
}

func TestRunnerAsks(t *testing.T) {
	s, err := Parse("t.txt", strings.NewReader(asking))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"2\n", "= your prediction held: 2) a new leader is elected (see lines 3 and 4 above)\n"},
		{"x\n1\n", "= it did not: you said 1) nothing; what happened is 2) a new leader is elected (see lines 3 and 4 above)\n"},
		{"", "(not asking: nobody can answer, standard input ended) the answer: 2) a new leader is elected"},
	} {
		var out bytes.Buffer
		var ran []string
		r := teachingRunner(&out, &ran)
		r.ReadLine = linesFrom(c.in)
		rep := r.Run(context.Background(), []*Script{s})
		text := out.String()
		if !rep.OK || len(ran) != 5 || !strings.Contains(text, c.want) {
			t.Errorf("input %q: ok=%t ran=%q, want %q in:\n%s", c.in, rep.OK, ran, c.want, text)
		}
		// The verdict comes after the wait, before the say that explains it.
		if v, say := strings.Index(text, "  = "), strings.Index(text, "» The majority"); c.in != "" && (v < strings.Index(text, "wait new-leader") || v > say) {
			t.Errorf("verdict out of place:\n%s", text)
		}
		if strings.Contains(text, "=> 2") {
			t.Errorf("the answer shows before the question:\n%s", text)
		}
	}
	var out bytes.Buffer
	var ran []string
	r := teachingRunner(&out, &ran)
	r.NoPause, r.ReadLine = true, linesFrom("1\n")
	if rep := r.Run(context.Background(), []*Script{s}); !rep.OK || !strings.Contains(out.String(), "(not asking: --no-pause) the answer: 2) a new leader is elected") ||
		!strings.Contains(out.String(), "= the answer to t.txt:2 was 2) a new leader is elected") {
		t.Errorf("--no-pause:\n%s", out.String())
	}
}
