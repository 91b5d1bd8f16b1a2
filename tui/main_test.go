package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"go.uber.org/goleak"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

func TestMain(m *testing.M) {
	// Every screen in these tests is plain text, as under NO_COLOR.
	lipgloss.SetColorProfile(termenv.Ascii)
	// teatest leaves a goroutine waiting for SIGINT for the test binary's life.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"))
}

// clock is a settable clock for the in-test engine.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openPlayground starts a playground on the in-test engine.
func openPlayground(t *testing.T, controllers, brokers int, opt clustertest.Options) (*cluster.Playground, *clustertest.Engine) {
	t.Helper()
	cfg, err := cluster.NewConfig(controllers, brokers, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var eng *clustertest.Engine
	start := func(ctx context.Context, cfg cluster.Config, events *cluster.Events) (cluster.Engine, error) {
		eng = clustertest.New(cfg, events, opt)
		return eng, nil
	}
	pg, err := cluster.OpenWith(context.Background(), cfg, start)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	return pg, eng
}

// newModel returns a screen of size w×h on ctrl, with its first view.
func newModel(t *testing.T, ctrl cluster.Operator, w, h int) *Model {
	t.Helper()
	m := New(context.Background(), ctrl, Options{})
	m.Init()
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	pull(t, m)
	return m
}

// pull runs the pending pull at once, as the tick would, and hands its
// answer to the model.
func pull(t *testing.T, m *Model) {
	t.Helper()
	msg := poll(m.ctx, m.ctrl, m.pollSeq, m.after, 0)().(snapshotMsg)
	if msg.err != nil {
		t.Fatalf("pull: %v", msg.err)
	}
	m.Update(msg)
}

// keyMsg builds the message a terminal sends for a key.
func keyMsg(k string) tea.KeyMsg {
	special := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "tab": tea.KeyTab, "space": tea.KeySpace,
		"ctrl+c": tea.KeyCtrlC, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace,
	}
	if t, ok := special[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// press sends keys one by one and runs the actions they start, handing
// their answers back, as the program would.
func press(t *testing.T, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		runCmd(m, cmd)
	}
}

// runCmd runs cmd (each of a batch's) and hands an action's answer to the
// model; other messages (the cursor's blink, quit) are not needed here.
func runCmd(m *Model, cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	switch msg := msg.(type) {
	case actionMsg:
		m.Update(msg)
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(m, c)
		}
	}
	return msg
}

// screenLines returns the rendered screen's lines.
func screenLines(m *Model) []string { return strings.Split(m.View(), "\n") }
