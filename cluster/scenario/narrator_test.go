package scenario

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// narration records what a Narrator is told, one line a call.
type narration struct{ calls []string }

func (n *narration) Header(file string, lines []string) {
	n.calls = append(n.calls, fmt.Sprintf("header %s %q", file, lines))
}
func (n *narration) Next(st Step) {
	n.calls = append(n.calls, fmt.Sprintf("next %d %q", st.Line, st.Comment))
}
func (n *narration) Asked(st Step, a *Ask) {
	n.calls = append(n.calls, fmt.Sprintf("asked %d %s %q", st.Line, a.Question, a.Choices))
}
func (n *narration) Ran(st Step, sr *StepReport) {
	n.calls = append(n.calls, fmt.Sprintf("ran %d ok=%t %q", st.Line, sr.OK, sr.Output))
}
func (n *narration) Judged(v Verdict) {
	n.calls = append(n.calls, fmt.Sprintf("judged %s got=%d held=%t evidence=%v", v.Pos, v.Got, v.Held(), v.Evidence))
}

// A Narrator hears the run in order, as values: the header, each line
// before and after it runs, the question before its answer is read, and
// the verdict with the lines that show it, before the say that explains.
func TestRunnerNarrates(t *testing.T) {
	s, err := Parse("t.txt", strings.NewReader("# Title\n\n"+asking))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		held string
	}{{"2\n", "got=2 held=true"}, {"1\n", "got=1 held=false"}} {
		var out bytes.Buffer
		var ran []string
		n := &narration{}
		r := teachingRunner(&out, &ran)
		r.Step, r.Narrator, r.ReadLine = true, n, linesFrom(c.in)
		r.Enter = func(context.Context) error { return nil }
		if rep := r.Run(context.Background(), []*Script{s}); !rep.OK {
			t.Fatalf("run failed:\n%s", out.String())
		}
		want := []string{
			`header t.txt ["Title"]`,
			`next 3 []`, `ran 3 ok=true ""`,
			`next 4 []`, `asked 4 What happens when the leader dies? ["nothing" "a new leader is elected"]`,
			`ran 4 ok=true "What happens when the leader dies?\npredicted ` + strings.TrimSpace(c.in) + `) ` + map[string]string{"2\n": "a new leader is elected", "1\n": "nothing"}[c.in] + `"`,
			`next 5 []`, `ran 5 ok=true ""`,
			`next 6 []`, `ran 6 ok=true ""`,
			`judged t.txt:4 ` + c.held + ` evidence=[5 6]`,
			`next 7 []`, `ran 7 ok=true "» The majority elected a new leader"`,
			`next 8 []`, `ran 8 ok=true ""`,
		}
		if !reflect.DeepEqual(n.calls, want) {
			t.Errorf("input %q: narrated\n%s\nwant\n%s", c.in, strings.Join(n.calls, "\n"), strings.Join(want, "\n"))
		}
	}
}
