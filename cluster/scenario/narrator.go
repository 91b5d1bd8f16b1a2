package scenario

// A Narrator is told, as values, what a run shows the person stepping
// through it: the file's header, each line before it runs with the
// comment block above it, each question, each line's result and each
// verdict. A live screen's lesson panel draws these instead of reading
// the text the Runner writes to Prompt and Out; the Runner calls it from
// the goroutine that runs the file, besides writing the same as text.
type Narrator interface {
	// Header is the comment at the top of the file, before its first
	// line runs (only when it has one and the run steps or explains).
	Header(file string, lines []string)
	// Next is the line about to run. With Step, Enter is waited for
	// next, unless it is an ask line: its answer is the wait.
	Next(st Step)
	// Asked is a question, right before its answer is read.
	Asked(st Step, a *Ask)
	// Ran is a line's result, failed or not.
	Ran(st Step, sr *StepReport)
	// Judged says whether a prediction held, after the lines it was
	// about ran.
	Judged(v Verdict)
}

// Verdict is the outcome of an ask line: what the learner said and what
// happened.
type Verdict struct {
	// Pos is the ask line's FILE:LINE.
	Pos string
	Ask *Ask
	// Got is the learner's choice, from 1; 0 when nobody answered.
	Got int
	// Evidence are the lines, by number, whose results show the outcome.
	Evidence []int
}

// Held reports whether the learner predicted what happened.
func (v Verdict) Held() bool { return v.Got != 0 && v.Got == v.Ask.Answer }
