package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// TestEndToEndInTmux builds the kraftlab binary, runs "kraftlab up" in a
// tmux pane as a person would run it in a terminal, and drives the screen
// with keys: kill the leader, start it again, isolate the new leader,
// heal, quit. It reads the screen with capture-pane. With
// KRAFTLAB_TUI_CAPTURE=DIR it also writes the three captures (steady
// state, after the leader kill, during the partition) to DIR.
func TestEndToEndInTmux(t *testing.T) {
	tmux, dir, bin := buildForTmux(t)
	p := &pane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(p.close)
	cmd := fmt.Sprintf("env KRAFTLAB_HOME=%s %s up --profile fast --controllers 3 --brokers 1; echo \"[kraftlab exited $?]\"; sleep 600", dir, bin)
	p.run("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "48", cmd)

	screen := p.waitFor("the screen or an error", func(s string) bool {
		return strings.Contains(s, "LEADER-SAW") || strings.Contains(s, "[kraftlab exited") || strings.Contains(s, "running headless")
	})
	if strings.Contains(screen, "[kraftlab exited") || strings.Contains(screen, "running headless") {
		t.Fatalf("kraftlab up did not open the screen:\n%s", strings.TrimSpace(screen))
	}

	// Steady state: a leader that commits.
	screen = p.waitFor("a leader with a high watermark", func(s string) bool {
		l, _, hwm := header(s)
		return l > 0 && hwm > 0
	})
	leader, epoch, hwm := header(screen)
	p.save("steady", screen)

	// A second screen on the same playground (kraftlab tui, as on a
	// projector): a say shows on both, and quitting it leaves the
	// playground running.
	w := &pane{t: t, tmux: tmux, sock: p.sock, target: "watch"}
	w.run("new-session", "-d", "-s", "watch", "-x", "160", "-y", "48",
		fmt.Sprintf("env KRAFTLAB_HOME=%s %s tui; echo \"[tui exited $?]\"; sleep 600", dir, bin))
	w.waitFor("the second screen", func(s string) bool {
		l, _, _ := header(s)
		return l == leader || strings.Contains(s, "[tui exited")
	})
	say := exec.Command(bin, "say", "Both screens show this")
	say.Env = append(os.Environ(), "KRAFTLAB_HOME="+dir, "KRAFTLAB_SESSION=")
	if out, err := say.CombinedOutput(); err != nil {
		t.Fatalf("kraftlab say: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "» Both screens show this") {
		t.Fatalf("kraftlab say printed %q", out)
	}
	for _, s := range []*pane{p, w} {
		s.waitFor("the say on "+s.name(), func(s string) bool { return strings.Contains(s, "» Both screens show this") })
	}
	attachedScreen(t, tmux, p.sock, dir, bin, leader)
	w.keys("q")
	w.waitFor("the watching screen's quit question", func(s string) bool {
		return strings.Contains(s, "Quit? (the playground keeps running)")
	})
	w.keys("y")
	screen = w.waitFor("kraftlab tui to exit", func(s string) bool { return strings.Contains(s, "[tui exited") })
	if !strings.Contains(screen, "[tui exited 0]") || !strings.Contains(screen, `left the screen; playground "default" keeps running`) {
		t.Fatalf("kraftlab tui did not exit cleanly:\n%s", screen)
	}

	// Background load: the header says so and the high watermark runs.
	p.keys("L")
	p.waitFor("the load in the header and the high watermark moving", func(s string) bool {
		_, _, h := header(s)
		return strings.Contains(s, "load 100/s") && h >= hwm+50
	})

	// Kill it: a new leader in a higher epoch, and the kill in the log.
	p.keys("l", "x")
	screen = p.waitFor("a new leader after the kill", func(s string) bool {
		l, e, _ := header(s)
		return l > 0 && l != leader && e > epoch && strings.Contains(s, fmt.Sprintf("killed node %d", leader))
	})
	if row := rowOf(screen, leader); !strings.Contains(row, "killed") {
		t.Fatalf("the killed leader's row does not say killed: %q\n%s", row, screen)
	}
	p.save("leader-kill", screen)

	// Start the old leader again (still selected), then isolate the new
	// one: the other two elect a leader, and check-quorum makes the
	// isolated one give up.
	p.keys("s")
	p.waitFor("the old leader started", func(s string) bool {
		return strings.Contains(s, fmt.Sprintf("started node %d", leader))
	})
	leader, epoch, _ = header(p.capture())
	p.keys("l", "i")
	p.waitFor("a leader elected without the isolated one", func(s string) bool {
		l, e, _ := header(s)
		return strings.Contains(rowOf(s, leader), "isolated") && l > 0 && l != leader && e > epoch
	})
	screen = p.waitFor("the isolated leader giving up (check-quorum)", func(s string) bool {
		row := rowOf(s, leader)
		return strings.Contains(row, "isolated") && !strings.Contains(row, "Leader")
	})
	p.save("partition", screen)

	p.keys("H")
	p.waitFor("every link healed", func(s string) bool { return strings.Contains(s, "every link is healthy") })

	// A screen still watching when up's own screen stops the playground
	// ends too, saying so.
	w = &pane{t: t, tmux: tmux, sock: p.sock, target: "watch2"}
	w.run("new-session", "-d", "-s", "watch2", "-x", "120", "-y", "40",
		fmt.Sprintf("env KRAFTLAB_HOME=%s %s tui; echo \"[tui exited $?]\"; sleep 600", dir, bin))
	w.waitFor("the third screen", func(s string) bool { return strings.Contains(s, "HWM") || strings.Contains(s, "[tui exited") })

	p.keys("q")
	p.waitFor("the quit question", func(s string) bool { return strings.Contains(s, "Quit and stop the playground?") })
	p.keys("y")
	screen = p.waitFor("kraftlab to exit", func(s string) bool { return strings.Contains(s, "[kraftlab exited") })
	if !strings.Contains(screen, "[kraftlab exited 0]") {
		t.Fatalf("kraftlab up did not exit cleanly:\n%s", screen)
	}
	screen = w.waitFor("the watching screen to end with the playground", func(s string) bool { return strings.Contains(s, "[tui exited") })
	if !strings.Contains(screen, `playground "default" shut down`) || !strings.Contains(screen, "[tui exited 0]") {
		t.Fatalf("kraftlab tui did not end with the playground:\n%s", screen)
	}
}

// buildForTmux skips the test where it cannot run (-short, no tmux, no go
// tool), else builds the kraftlab binary into a fresh folder. It returns
// tmux's path, the folder (for KRAFTLAB_HOME and tmux's socket) and the
// binary.
func buildForTmux(t *testing.T) (tmux, dir, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end test (it builds the binary and runs a cluster)")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed, so the end-to-end screen test cannot run (.ci/run installs it: apt-get install tmux)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH, so the kraftlab binary cannot be built")
	}
	// A short folder: it holds the playground's control socket, whose path
	// must fit in a Unix socket address.
	dir, err = os.MkdirTemp("", "kltui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin = filepath.Join(dir, "kraftlab")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/kraftlab/kraftlab").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return tmux, dir, bin
}

// upInTmux builds the binary and runs "kraftlab up" with upArgs in a
// 160x48 tmux pane, until the screen shows. run runs another kraftlab
// command against that playground and fails the test if it fails; bin is
// the binary, for a second pane.
func upInTmux(t *testing.T, upArgs string) (p *pane, bin string, run func(args ...string) string) {
	t.Helper()
	tmux, dir, bin := buildForTmux(t)
	p = &pane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(p.close)
	cmd := fmt.Sprintf("env KRAFTLAB_HOME=%s %s up %s; echo \"[kraftlab exited $?]\"; sleep 600", dir, bin, upArgs)
	p.run("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "48", cmd)
	screen := p.waitFor("the screen or an error", func(s string) bool {
		return strings.Contains(s, "LEADER-SAW") || strings.Contains(s, "[kraftlab exited") || strings.Contains(s, "running headless")
	})
	if !strings.Contains(screen, "LEADER-SAW") {
		t.Fatalf("kraftlab up did not open the screen:\n%s", strings.TrimSpace(screen))
	}
	run = func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "KRAFTLAB_HOME="+dir, "KRAFTLAB_SESSION=")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("kraftlab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	return p, bin, run
}

// pane is a tmux session on its own server socket, so the test never
// touches anyone's tmux.
type pane struct {
	t          *testing.T
	tmux, sock string
	// target is the tmux session; "" means e2e.
	target string
}

func (p *pane) name() string {
	if p.target == "" {
		return "e2e"
	}
	return p.target
}

func (p *pane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *pane) close() {
	exec.Command(p.tmux, "-S", p.sock, "kill-server").Run()
}

func (p *pane) capture() string { return p.run("capture-pane", "-p", "-t", p.name()) }

// keys types keys one at a time, as literal text.
func (p *pane) keys(keys ...string) {
	for _, k := range keys {
		p.run("send-keys", "-t", p.name(), "-l", k)
	}
}

// waitFor polls the pane until cond holds, for at most a minute.
func (p *pane) waitFor(what string, cond func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s := p.capture()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %s within a minute; the screen:\n%s", what, strings.TrimRight(s, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// save writes a capture to $KRAFTLAB_TUI_CAPTURE, if set.
func (p *pane) save(name, screen string) {
	dir := os.Getenv("KRAFTLAB_TUI_CAPTURE")
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(screen), 0o644); err != nil {
		p.t.Error(err)
	}
}

var headerRE = regexp.MustCompile(`leader (\d+|none)[^\n]*?epoch (\d+)\s+HWM (-|\d+)`)

// header reads the leader, the epoch and the high watermark from the
// screen's header; 0 and -1 when there are none.
func header(screen string) (leader, epoch int, hwm int64) {
	m := headerRE.FindStringSubmatch(screen)
	if m == nil {
		return 0, 0, -1
	}
	leader, _ = strconv.Atoi(m[1])
	epoch, _ = strconv.Atoi(m[2])
	hwm = -1
	if m[3] != "-" {
		hwm, _ = strconv.ParseInt(m[3], 10, 64)
	}
	return leader, epoch, hwm
}

// rowOf returns node id's row of the quorum table.
func rowOf(screen string, id int) string {
	re := regexp.MustCompile(fmt.Sprintf(`(?m)^[▶◆ ] +%d (Leader|Follower|Candidate|Prospective|Unattached|Resigned|Observer|-) .*$`, id))
	return re.FindString(screen)
}

// attachedScreen opens the live screen on the playground as on a real
// Kafka cluster, over the wire (kraftlab tui --bootstrap-server): it says
// it is read-only, shows the same leader, ignores the kill key, and quits
// without stopping anything.
func attachedScreen(t *testing.T, tmux, sock, dir, bin string, leader int) {
	t.Helper()
	nodes := exec.Command(bin, "nodes", "--json")
	nodes.Env = append(os.Environ(), "KRAFTLAB_HOME="+dir, "KRAFTLAB_SESSION=")
	out, err := nodes.Output()
	if err != nil {
		t.Fatalf("kraftlab nodes: %v", err)
	}
	var ns []view.Node
	if err := json.Unmarshal(out, &ns); err != nil {
		t.Fatal(err)
	}
	var brokers []string
	for _, n := range ns {
		if n.Kind == view.KindBroker {
			brokers = append(brokers, n.Listener)
		}
	}
	a := &pane{t: t, tmux: tmux, sock: sock, target: "attached"}
	a.run("new-session", "-d", "-s", "attached", "-x", "160", "-y", "48",
		fmt.Sprintf("%s tui --bootstrap-server %s; echo \"[attached exited $?]\"; sleep 600", bin, strings.Join(brokers, ",")))
	screen := a.waitFor("the attached screen", func(s string) bool {
		l, _, _ := header(s)
		return strings.Contains(s, "ATTACHED, READ-ONLY") && l == leader || strings.Contains(s, "[attached exited")
	})
	if !strings.Contains(screen, "messages between the nodes: not visible over the wire") || strings.Contains(screen, "x kill") {
		t.Fatalf("the attached screen does not say what it cannot see, or offers to kill:\n%s", screen)
	}
	a.keys("l", "x")
	a.keys("q")
	a.waitFor("the attached screen's quit question", func(s string) bool { return strings.Contains(s, "the screen only reads it") })
	a.keys("y")
	screen = a.waitFor("the attached screen to exit", func(s string) bool { return strings.Contains(s, "[attached exited") })
	if !strings.Contains(screen, "[attached exited 0]") {
		t.Fatalf("kraftlab tui --bootstrap-server did not exit cleanly:\n%s", screen)
	}
	evs := exec.Command(bin, "events")
	evs.Env = nodes.Env
	if out, err := evs.Output(); err != nil || strings.Contains(string(out), "killed node") {
		t.Fatalf("after x on the read-only screen, kraftlab events (%v):\n%s", err, out)
	}
}
