package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// AskCommand is the scenario line that asks the learner to predict what
// the next line will do:
//
//	ask QUESTION | CHOICE | CHOICE [| CHOICE...] => N
//
// N is the right choice, counted from 1. The Runner runs it itself: it
// prints the question and the numbered choices, reads a number and Enter,
// runs the next line (and the wait or expect right after it, if any), then says
// whether the prediction held, right before the say line that explains it.
// Without input (standard input ended, or NoPause) it prints the right
// answer and goes on.
const AskCommand = "ask"

// Ask is a parsed ask line.
type Ask struct {
	Question string
	Choices  []string
	// Answer is the right choice, from 1.
	Answer int
}

// ParseAsk reads an ask line's words (AskCommand first).
func ParseAsk(args []string) (*Ask, error) {
	const form = "want: ask QUESTION | CHOICE | CHOICE [| ...] => N"
	if len(args) == 0 || args[0] != AskCommand {
		return nil, errors.New("not an ask line")
	}
	text := strings.Join(args[1:], " ")
	i := strings.LastIndex(text, "=>")
	if i < 0 {
		return nil, fmt.Errorf("ask needs the right answer at its end, => N (%s)", form)
	}
	n, err := strconv.Atoi(strings.TrimSpace(text[i+2:]))
	if err != nil {
		return nil, fmt.Errorf("ask: %q after => is not a choice number (%s)", strings.TrimSpace(text[i+2:]), form)
	}
	parts := strings.Split(text[:i], "|")
	a := &Ask{Question: strings.TrimSpace(parts[0]), Answer: n}
	if a.Question == "" {
		return nil, fmt.Errorf("ask needs a question (%s)", form)
	}
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("ask: choice %d is empty (%s)", len(a.Choices)+1, form)
		}
		a.Choices = append(a.Choices, p)
	}
	if len(a.Choices) < 2 {
		return nil, fmt.Errorf("ask needs at least two choices, each after a | (%s)", form)
	}
	if n < 1 || n > len(a.Choices) {
		return nil, fmt.Errorf("ask: the answer => %d is not one of the choices 1..%d", n, len(a.Choices))
	}
	return a, nil
}

// Right is the right choice, numbered: "2) it resigns".
func (a *Ask) Right() string { return fmt.Sprintf("%d) %s", a.Answer, a.Choices[a.Answer-1]) }

// pendingAsk is a question waiting for the outcome of the lines after it.
type pendingAsk struct {
	ask *Ask
	pos string
	// got is the learner's choice; 0 when nobody answered.
	got int
	// evidence are the numbers of the lines whose output shows the outcome.
	evidence []int
	// waits is how many lines are still to run before the verdict.
	waits int
}

// askLine shows the question and reads the answer.
func (r *Runner) askLine(ctx context.Context, st Step, steps []Step, i int, out io.Writer) (*pendingAsk, error) {
	a, err := ParseAsk(st.Args)
	if err != nil {
		return nil, err
	}
	p := &pendingAsk{ask: a, pos: st.Pos()}
	// The outcome: the next line that is not a say or a sleep, and the
	// wait (or expect) right after it, the check that shows it.
	check := func(cmd string) bool { return cmd == "wait" || cmd == "expect" }
	for j := i + 1; j < len(steps) && p.waits == 0; j++ {
		switch steps[j].Args[0] {
		case AskCommand:
			j = len(steps)
		case "say", "sleep", PauseCommand:
		default:
			p.waits = j - i
			if j+1 < len(steps) && check(steps[j+1].Args[0]) && !check(steps[j].Args[0]) {
				p.waits++
			}
		}
	}
	fmt.Fprintf(out, "%s\n", a.Question)
	if r.Narrator != nil {
		r.Narrator.Asked(st, a)
	}
	r.promptf("%9s  ? %s\n", "", a.Question)
	for k, c := range a.Choices {
		r.promptf("%9s    %d) %s\n", "", k+1, c)
	}
	if r.NoPause || r.ReadLine == nil {
		r.promptf("%9s  (not asking: %s) the answer: %s\n", "", r.whyNotAsking(), a.Right())
		fmt.Fprintf(out, "not asked; the answer: %s\n", a.Right())
		return p, nil
	}
	for {
		r.promptf("%9s  [your prediction, 1-%d, then Enter] ", "", len(a.Choices))
		line, err := r.ReadLine(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			r.promptf("\n%9s  (not asking: nobody can answer, standard input ended) the answer: %s\n", "", a.Right())
			fmt.Fprintf(out, "not asked; the answer: %s\n", a.Right())
			return p, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(line))
		if err == nil && n >= 1 && n <= len(a.Choices) {
			p.got = n
			fmt.Fprintf(out, "predicted %d) %s\n", n, a.Choices[n-1])
			return p, nil
		}
		r.promptf("%9s  %q is not a choice: type a number from 1 to %d\n", "", strings.TrimSpace(line), len(a.Choices))
	}
}

func (r *Runner) whyNotAsking() string {
	if r.NoPause {
		return "--no-pause"
	}
	return "nothing to read an answer from"
}

// verdict says whether the prediction held, pointing at the lines that
// show it.
func (r *Runner) verdict(p *pendingAsk) {
	if r.Narrator != nil {
		r.Narrator.Judged(Verdict{Pos: p.pos, Ask: p.ask, Got: p.got, Evidence: p.evidence})
	}
	lines := make([]string, len(p.evidence))
	for i, l := range p.evidence {
		lines[i] = strconv.Itoa(l)
	}
	see := ""
	switch n := len(lines); n {
	case 0:
	case 1:
		see = " (see line " + lines[0] + " above)"
	default:
		see = " (see lines " + strings.Join(lines[:n-1], ", ") + " and " + lines[n-1] + " above)"
	}
	switch {
	case p.got == 0:
		r.promptf("%9s  = the answer to %s was %s%s\n", "", p.pos, p.ask.Right(), see)
	case p.got == p.ask.Answer:
		r.promptf("%9s  = your prediction held: %s%s\n", "", p.ask.Right(), see)
	default:
		r.promptf("%9s  = it did not: you said %d) %s; what happened is %s%s\n", "", p.got, p.ask.Choices[p.got-1], p.ask.Right(), see)
	}
}
