package tui

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// verdictRE finds the lesson panel's verdict line.
var verdictRE = regexp.MustCompile(`(?m)^(✔ your prediction held|✘ it did not).*$`)

// TestLessonEndToEndInTmux runs "kraftlab lesson 1 --profile fast" on the
// built binary in an 80x24 tmux pane, as a learner would in a terminal:
// the live screen opens with the lesson panel, Enter runs each line, a
// number answers each question (2 each time: right for the first and
// third, wrong for the second), the panel says whether each prediction
// held, the lesson ends, and quitting stops its playground and prints
// what ran; then it quits lesson 2 at its first question.
func TestLessonEndToEndInTmux(t *testing.T) {
	tmux, dir, bin := buildForTmux(t)
	p := &pane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(p.close)
	cmd := fmt.Sprintf("env KRAFTLAB_HOME=%s %s lesson 1 --profile fast; echo \"[kraftlab exited $?]\"; sleep 600", dir, bin)
	p.run("new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24", cmd)

	// The whole first step, not only the panel's title: a capture may
	// catch the terminal in the middle of drawing it.
	screen := p.waitFor("the lesson panel's first step or an error", func(s string) bool {
		return (strings.Contains(s, "Lesson · step 1 of 18 · Pull replication") && strings.Contains(s, "enter runs line 23")) || strings.Contains(s, "[kraftlab exited")
	})
	if strings.Contains(screen, "[kraftlab exited") {
		t.Fatalf("kraftlab lesson did not open the screen:\n%s", strings.TrimSpace(screen))
	}
	if !strings.Contains(screen, "What it teaches") || !strings.Contains(screen, "enter runs line 23: wait leader") {
		t.Fatalf("the first explanation is not on the panel:\n%s", screen)
	}

	questions := regexp.MustCompile(`\? (A follower is cut off|What does the leader know|The follower is back)`)
	var asked []string
	held, missed := 0, 0
	lastVerdict := ""
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s := p.capture()
		if strings.Contains(s, "the lesson is over") {
			screen = s
			break
		}
		if strings.Contains(s, "the lesson stopped") || strings.Contains(s, "[kraftlab exited") {
			t.Fatalf("the lesson did not run to its end:\n%s", s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lesson did not end within 2 minutes; asked %q; the screen:\n%s", asked, s)
		}
		// A verdict stays until the next section: count each one once.
		if v := verdictRE.FindString(s); v != "" && v != lastVerdict {
			lastVerdict = v
			if strings.HasPrefix(v, "✔") {
				held++
			} else {
				missed++
			}
		}
		switch {
		case strings.Contains(s, "1-3 your prediction (a number)"):
			q := questions.FindString(s)
			if q == "" {
				t.Fatalf("a question without its text:\n%s", s)
			}
			if len(asked) == 0 || asked[len(asked)-1] != q {
				asked = append(asked, q)
			}
			p.keys("2")
		case strings.Contains(s, "enter runs line"):
			p.run("send-keys", "-t", p.name(), "Enter")
		}
		time.Sleep(150 * time.Millisecond)
	}
	if len(asked) != 3 || held != 2 || missed != 1 {
		t.Fatalf("asked %q, %d held and %d missed; want the 3 questions, 2 held and 1 missed; the end:\n%s", asked, held, missed, screen)
	}
	if !strings.Contains(screen, "the lesson is over: all 18 lines ran; 2 of 3 predictions held") {
		t.Fatalf("the end does not say that every line ran:\n%s", screen)
	}

	p.keys("q")
	p.waitFor("the quit question", func(s string) bool { return strings.Contains(s, "Quit and stop the playground?") })
	p.keys("y")
	screen = p.waitFor("kraftlab to exit", func(s string) bool { return strings.Contains(s, "[kraftlab exited") })
	if !strings.Contains(screen, "[kraftlab exited 0]") || !strings.Contains(screen, "lesson replication done (2 of 3 predictions held); its playground is down") ||
		!strings.Contains(screen, "--- PASS cli/lessons/1-replication.txt") {
		t.Fatalf("kraftlab lesson did not end cleanly:\n%s", screen)
	}

	// Quitting mid-lesson, at a question, stops the lesson and its
	// playground: the process ends at once, and says where it left off.
	q := &pane{t: t, tmux: tmux, sock: p.sock, target: "mid"}
	q.run("new-session", "-d", "-s", "mid", "-x", "80", "-y", "24", strings.Replace(cmd, "lesson 1", "lesson 2", 1))
	for {
		s := q.waitFor("a question or the next line", func(s string) bool {
			return strings.Contains(s, "your prediction (a number)") || strings.Contains(s, "enter runs line") || strings.Contains(s, "[kraftlab exited")
		})
		if strings.Contains(s, "your prediction (a number)") || strings.Contains(s, "[kraftlab exited") {
			break
		}
		q.run("send-keys", "-t", q.name(), "Enter")
		time.Sleep(150 * time.Millisecond)
	}
	q.keys("q")
	q.waitFor("the quit question", func(s string) bool { return strings.Contains(s, "Quit and stop the playground?") })
	q.keys("y")
	screen = q.waitFor("kraftlab to exit mid-lesson", func(s string) bool { return strings.Contains(s, "[kraftlab exited") })
	if !strings.Contains(screen, "[kraftlab exited 0]") || !regexp.MustCompile(`left lesson elections at cli/lessons/2-elections.txt:\d+, before its end; its`).MatchString(screen) {
		t.Fatalf("quitting mid-lesson did not end it cleanly:\n%s", screen)
	}
}
