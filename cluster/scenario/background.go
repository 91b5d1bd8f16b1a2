package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// backgroundWord ends a line that runs in the background, as in a shell:
// with the cluster clock paused, a topic creation waits for its messages
// to be stepped, and the lines that step them must run meanwhile.
const backgroundWord = "&"

// backgroundGrace bounds how long a file's end waits for the lines it
// started in the background.
var backgroundGrace = 30 * time.Second

// checkBackground says why a line cannot run in the background.
func checkBackground(args []string) error {
	if len(args) == 0 {
		return errors.New("a lone & runs nothing: put it after a command")
	}
	switch args[0] {
	case "up", PauseCommand, AskCommand:
		return fmt.Errorf("%s cannot run in the background: the run itself waits on it", args[0])
	}
	return nil
}

// job is a line running in the background. Its goroutine writes out and
// err and then closes done; the runner reads them only after that.
type job struct {
	st   Step
	sr   *StepReport
	t0   time.Time
	out  bytes.Buffer
	err  error
	done chan struct{}
}

// jobs are the background lines of one file run.
type jobs struct {
	r       *Runner
	ctx     context.Context
	cancel  context.CancelFunc
	running []*job
}

func (r *Runner) newJobs(ctx context.Context) *jobs {
	ctx, cancel := context.WithCancel(ctx)
	return &jobs{r: r, ctx: ctx, cancel: cancel}
}

// start runs st in the background.
func (js *jobs) start(st Step, sr *StepReport) {
	j := &job{st: st, sr: sr, t0: js.r.now(), done: make(chan struct{})}
	js.running = append(js.running, j)
	go func() {
		defer close(j.done)
		j.err = js.r.Exec(js.ctx, st.Args, &j.out)
	}()
}

// reap reports the lines that ended, in the order they were started, and
// returns the first failure among them.
func (js *jobs) reap() (*job, error) {
	var failed *job
	kept := js.running[:0]
	for _, j := range js.running {
		select {
		case <-j.done:
		default:
			kept = append(kept, j)
			continue
		}
		js.report(j)
		if j.err != nil && failed == nil {
			failed = j
		}
	}
	js.running = kept
	if failed != nil {
		return failed, failed.err
	}
	return nil, nil
}

// report fills the line's report with its end and shows it.
func (js *jobs) report(j *job) {
	r := js.r
	j.sr.ElapsedMs = r.now().Sub(j.t0).Milliseconds()
	j.sr.Output = string(bytes.TrimRight(j.out.Bytes(), "\n"))
	j.sr.OK = j.err == nil
	if j.err != nil {
		j.sr.Error = j.err.Error()
	}
	r.printf("%9s  %s ended (%s)\n", "", j.st.Pos(), fmtElapsed(time.Duration(j.sr.ElapsedMs)*time.Millisecond))
	r.printOutput(j.sr.Output)
	if r.Narrator != nil {
		r.Narrator.Ran(j.st, j.sr)
	}
}

// finish waits, up to backgroundGrace, for the lines still running when
// the file's last line is done, and reports them.
func (js *jobs) finish() (*job, error) {
	deadline := time.NewTimer(backgroundGrace)
	defer deadline.Stop()
	for _, j := range js.running {
		select {
		case <-j.done:
		case <-deadline.C:
			return j, fmt.Errorf("still running %v after the last line (a paused cluster clock, a cut link or a stopped node may hold it: resume, heal or step its messages before the file ends)", backgroundGrace)
		case <-js.ctx.Done():
			return j, js.ctx.Err()
		}
	}
	return js.reap()
}

// stop cancels the lines still running and waits for them to return.
func (js *jobs) stop() {
	js.cancel()
	for _, j := range js.running {
		<-j.done
	}
}
