package server

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of a rateHandler.
const (
	// logBurst is how many records of one level and message pass per
	// interval.
	logBurst = 5
	// logInterval is the window the burst is counted over.
	logInterval = time.Second
)

// maxLogKeys bounds the messages tracked; messages are the code's constants,
// so this is never reached unless a message is built from input, and
// then the records pass unbounded rather than the map growing.
const maxLogKeys = 4096

// rateHandler bounds how often a log repeats itself: it passes records
// to an inner handler at most burst times per interval for each level and
// message, and counts the rest, so a fault that fails the same way
// thousands of times a second (a broker out of file descriptors failing
// to open each of its partitions on every metadata image) writes a few
// lines a second, not hundreds of megabytes. Records below minLevel
// always pass.
type rateHandler struct {
	inner    slog.Handler
	minLevel slog.Level
	burst    int
	interval time.Duration
	now      func() time.Time
	st       *logState // shared by the handlers WithAttrs and WithGroup derive
}

type logKey struct {
	level slog.Level
	msg   string
}

type logWindow struct {
	start      time.Time
	passed     int
	suppressed int // since the last record that passed
}

type logState struct {
	mu   sync.Mutex
	seen map[logKey]*logWindow
}

// newRateHandler wraps inner: records at minLevel and above pass at most burst times
// per interval for each level and message; the first to pass after some
// were held back carries their count as "suppressed". Zero burst or
// interval take the defaults.
func newRateHandler(inner slog.Handler, minLevel slog.Level, burst int, interval time.Duration) *rateHandler {
	if burst <= 0 {
		burst = logBurst
	}
	if interval <= 0 {
		interval = logInterval
	}
	return &rateHandler{inner: inner, minLevel: minLevel, burst: burst, interval: interval, now: time.Now,
		st: &logState{seen: map[logKey]*logWindow{}}}
}

// Enabled reports whether the inner handler takes records of level.
func (h *rateHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle passes r on unless its level and message have used up their
// burst in the current interval.
func (h *rateHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.minLevel {
		return h.inner.Handle(ctx, r)
	}
	suppressed, ok := h.admit(logKey{r.Level, r.Message})
	if !ok {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return h.inner.Handle(ctx, r)
}

// admit counts a record of k and says whether it passes, with how many
// were held back before it.
func (h *rateHandler) admit(k logKey) (int, bool) {
	now := h.now()
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	w := h.st.seen[k]
	if w == nil {
		if len(h.st.seen) >= maxLogKeys {
			return 0, true
		}
		w = &logWindow{start: now}
		h.st.seen[k] = w
	}
	if now.Sub(w.start) >= h.interval {
		w.start, w.passed = now, 0
	}
	if w.passed >= h.burst {
		w.suppressed++
		return 0, false
	}
	w.passed++
	n := w.suppressed
	w.suppressed = 0
	return n, true
}

// WithAttrs returns a handler with attrs that shares h's counts.
func (h *rateHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(attrs)
	return &c
}

// WithGroup returns a handler with the group that shares h's counts.
func (h *rateHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	return &c
}
