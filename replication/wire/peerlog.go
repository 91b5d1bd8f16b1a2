package wire

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// A peer can make a server refuse thousands of requests a second: each
// refusal is counted (Counters), but only peerLogBurst lines a
// peerLogWindow are logged per server at their level; the rest go to the
// debug level, and are counted by message and summed up in one line when
// the window ends.
const (
	peerLogBurst  = 10
	peerLogWindow = 10 * time.Second
)

// peerLog writes the log lines that peers cause (refusals, bad frames,
// closed connections) at a bounded rate.
type peerLog struct {
	log *slog.Logger

	mu         sync.Mutex
	start      time.Time // of the current window
	lines      int       // written in it
	suppressed map[string]int
	timer      *time.Timer // writes the summary at the window's end
	closed     bool
}

func newPeerLog(log *slog.Logger) *peerLog {
	return &peerLog{log: log, suppressed: make(map[string]int)}
}

func (p *peerLog) info(msg string, args ...any)  { p.emit(slog.LevelInfo, msg, args...) }
func (p *peerLog) error(msg string, args ...any) { p.emit(slog.LevelError, msg, args...) }

func (p *peerLog) emit(level slog.Level, msg string, args ...any) {
	ctx := context.Background()
	if !p.log.Enabled(ctx, level) {
		return
	}
	p.mu.Lock()
	now := time.Now()
	if p.timer == nil && now.Sub(p.start) >= peerLogWindow {
		p.start, p.lines = now, 0
	}
	if p.lines < peerLogBurst {
		p.lines++
		p.mu.Unlock()
		p.log.Log(ctx, level, msg, args...)
		return
	}
	p.suppressed[msg]++
	if p.timer == nil && !p.closed {
		p.timer = time.AfterFunc(p.start.Add(peerLogWindow).Sub(now), p.summary)
	}
	p.mu.Unlock()
	// A log that keeps debug lines keeps these too.
	p.log.Log(ctx, slog.LevelDebug, msg, args...)
}

// summary logs what the window suppressed and starts a new window.
func (p *peerLog) summary() {
	p.mu.Lock()
	p.timer = nil
	p.start, p.lines = time.Now(), 0
	suppressed := p.suppressed
	p.suppressed = make(map[string]int)
	p.mu.Unlock()
	if len(suppressed) == 0 {
		return
	}
	total := 0
	var by []string
	for _, msg := range slices.Sorted(maps.Keys(suppressed)) {
		total += suppressed[msg]
		by = append(by, fmt.Sprintf("%dx %q", suppressed[msg], msg))
	}
	p.log.Warn("log lines about peers suppressed", "count", total, "window", peerLogWindow,
		"burst", peerLogBurst, "messages", strings.Join(by, ", "))
}

// close writes the last summary at once and stops the timer.
func (p *peerLog) close() {
	p.mu.Lock()
	p.closed = true
	t := p.timer
	p.mu.Unlock()
	if t != nil && t.Stop() {
		p.summary()
	}
}
