package tui

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestQueueInTmux runs "kraftlab up" in a tmux pane, 80x24 and then
// 160x48, and holds time in its hand, as a learner would: space pauses
// the cluster clock and shows the queue of held messages (at 80x24 its
// tab comes to the front); c moves the focus into it; five chosen
// messages are delivered one by one (enter), one dropped (D), with
// ":clock advance" moving time on whenever the queue runs dry; then the
// clock is moved past controller.quorum.fetch.timeout.ms, the followers
// turn Prospective with their pre-votes held at the links, and space lets
// the election end in a new epoch. Each step is read off the screen. With
// KRAFTLAB_TUI_CAPTURE=DIR it writes the captures to DIR.
func TestQueueInTmux(t *testing.T) {
	tmux, dir, bin := buildForTmux(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			home := filepath.Join(dir, fmt.Sprintf("h%d", size[0]))
			p := &pane{t: t, tmux: tmux, sock: filepath.Join(dir, fmt.Sprintf("tmux%d.sock", size[0]))}
			t.Cleanup(p.close)
			stepInTmux(t, p, home, bin, size[0], size[1])
		})
	}
}

// stepInTmux is TestQueueInTmux on a pane of w×h.
func stepInTmux(t *testing.T, p *pane, home, bin string, w, h int) {
	cmd := fmt.Sprintf("env KRAFTLAB_HOME=%s %s up --profile fast --controllers 3 --brokers 0; echo \"[kraftlab exited $?]\"; sleep 600", home, bin)
	p.run("new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	screen := p.waitFor("a leader with a high watermark, or an error", func(s string) bool {
		l, _, hwm := header(s)
		return (l > 0 && hwm > 0) || strings.Contains(s, "[kraftlab exited")
	})
	if strings.Contains(screen, "[kraftlab exited") {
		t.Fatalf("kraftlab up did not open the screen:\n%s", strings.TrimSpace(screen))
	}
	_, epoch, _ := header(screen)
	tabbed := w < wideWidth
	size := fmt.Sprintf("%dx%d", w, h)

	p.keys(" ")
	screen = p.waitFor("the clock paused and the queue on screen", func(s string) bool {
		return strings.Contains(s, "CLOCK PAUSED") && strings.Contains(s, "Held messages: ") && (!tabbed || strings.Contains(s, "[Queue]"))
	})
	p.save("queue-paused-"+size, screen)
	p.keys("c")
	p.waitFor("the focus in the queue", func(s string) bool { return strings.Contains(s, "↑↓ choose • enter deliver") })

	q := &queueScreen{p: p}
	for i := range 6 {
		held := q.held()
		at := slices.Index(held, q.chosen(p.capture()))
		if at < 0 {
			at = 0
		}
		if i%2 == 1 && at+1 < len(held) {
			// Choose the next one down, not the oldest.
			want := held[at+1]
			p.keys("j")
			p.waitFor(fmt.Sprintf("#%d chosen", want), func(s string) bool { return q.chosen(s) == want })
		}
		id := q.chosen(p.capture())
		before := statusLine(p.capture())
		verb := "delivered"
		if i == 5 {
			verb = "dropped"
			p.keys("D")
		} else {
			p.special("Enter")
		}
		screen = p.waitFor(fmt.Sprintf("#%d %s", id, verb), func(s string) bool {
			st := statusLine(s)
			return st != before && strings.HasPrefix(st, verb+" #") && !slices.Contains(q.listed(s), id)
		})
		if verb == "dropped" && !strings.HasPrefix(statusLine(screen), fmt.Sprintf("dropped #%d ", id)) {
			t.Fatalf("D on #%d: the status line says %q", id, statusLine(screen))
		}
		p.save(fmt.Sprintf("queue-%s-%d-%s", verb, i+1, size), screen)
	}

	// Past the fetch timeout (200ms in this profile) with no answer from
	// the leader: the followers turn Prospective; their pre-votes wait at
	// the links.
	q.advance("1s")
	screen = p.waitFor("an election begun: a Prospective follower", func(s string) bool {
		return strings.Contains(s, "Prospective") && strings.Contains(s, "Held messages: ")
	})
	p.save("queue-election-"+size, screen)
	p.keys(" ")
	screen = p.waitFor("the election ended: a leader in a higher epoch", func(s string) bool {
		l, e, _ := header(s)
		return l > 0 && e > epoch && !strings.Contains(s, "CLOCK PAUSED")
	})
	if bar := lineWithPrefix(screen, "[Commit]"); tabbed && !strings.Contains(bar, " Flow ") {
		t.Errorf("running again, the Commit tab is not back in front, or the flow not back in its place: %q\n%s", bar, screen)
	}
	if !tabbed && !strings.Contains(screen, "Message flow: ") {
		t.Errorf("running again, the flow is not back in its place:\n%s", screen)
	}
	p.save("queue-resumed-"+size, screen)

	p.keys("q")
	p.waitFor("the quit question", func(s string) bool { return strings.Contains(s, "Quit and stop the playground?") })
	p.keys("y")
	screen = p.waitFor("kraftlab to exit", func(s string) bool { return strings.Contains(s, "[kraftlab exited") })
	if !strings.Contains(screen, "[kraftlab exited 0]") {
		t.Fatalf("kraftlab up did not exit cleanly:\n%s", screen)
	}
}

// queueScreen reads the queue pane off a tmux pane and moves the clock on
// through the command form.
type queueScreen struct {
	p *pane
}

// queueLineRE is a line of the queue pane: the cursor, the message's ID
// and its link.
var queueLineRE = regexp.MustCompile(`(?m)^([▶ ]) #(\d+) +\d+→\d+ `)

// listed are the IDs of the messages the pane lists, in order.
func (q *queueScreen) listed(screen string) []uint64 {
	var ids []uint64
	for _, m := range queueLineRE.FindAllStringSubmatch(screen, -1) {
		id, _ := strconv.ParseUint(m[2], 10, 64)
		ids = append(ids, id)
	}
	return ids
}

// chosen is the ID of the message the cursor is on, 0 if none.
func (q *queueScreen) chosen(screen string) uint64 {
	for _, m := range queueLineRE.FindAllStringSubmatch(screen, -1) {
		if m[1] == "▶" {
			id, _ := strconv.ParseUint(m[2], 10, 64)
			return id
		}
	}
	return 0
}

// held waits until the pane lists a held message and returns their IDs;
// while it lists none it moves the clock on by 60ms, past the leader's
// wait on the parked Fetches (kraftlab.quorum.fetch.max.wait.ms, 50ms in
// this profile), so that their answers go out to wait at the links.
func (q *queueScreen) held() []uint64 {
	q.p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		q.advance("60ms")
		poll := time.Now().Add(3 * time.Second)
		for time.Now().Before(poll) {
			if ids := q.listed(q.p.capture()); len(ids) > 0 && q.chosen(q.p.capture()) != 0 {
				return ids
			}
			time.Sleep(100 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			q.p.t.Fatalf("no held message within a minute; the screen:\n%s", q.p.capture())
		}
	}
}

// advance runs ":clock advance d" and closes the output pane it opens.
func (q *queueScreen) advance(d string) {
	q.p.t.Helper()
	if len(q.listed(q.p.capture())) > 0 && d == "60ms" {
		return // messages are held already
	}
	q.p.keys(":")
	q.p.waitFor("the command form", func(s string) bool { return strings.Contains(s, ": kraftlab") })
	q.p.keys("clock advance " + d)
	q.p.special("Enter")
	title := "Output · kraftlab clock advance " + d
	q.p.waitFor("the clock advanced by "+d, func(s string) bool {
		return strings.Contains(s, title) && strings.Contains(s, "advanced the cluster clock by "+d)
	})
	q.p.special("Escape")
	q.p.waitFor("the output pane closed", func(s string) bool { return !strings.Contains(s, title) })
}

// special sends keys by tmux's names (Enter, Escape), not as text.
func (p *pane) special(keys ...string) {
	for _, k := range keys {
		p.run("send-keys", "-t", p.name(), k)
	}
}

// statusLine is the screen's status line, over the help bar.
func statusLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) < 2 {
		return ""
	}
	return strings.TrimSpace(lines[len(lines)-2])
}

// lineWithPrefix returns the first line that starts with prefix.
func lineWithPrefix(screen, prefix string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
