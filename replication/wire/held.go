package wire

import (
	"cmp"
	"errors"
	"slices"
	"sync"
	"time"
)

// ErrNoHeldMessage is Step's and Drop's error when no held message
// matches.
var ErrNoHeldMessage = errors.New("no held message matches")

// Held is a message a link holds: a request not yet written or a
// response read and not yet delivered, while the cluster clock is paused
// or the link's delay runs.
type Held struct {
	// ID numbers the held messages of a Links in the order they came.
	ID uint64
	// Link is the direction the message travels.
	Link LinkID
	// Conn numbers the connection it travels on: one connection
	// delivers its messages of one direction in order.
	Conn uint64
	Dir  Direction
	// Key and Version are the message's API.
	Key, Version int16
	// Corr is its correlation id.
	Corr int32
	// Bytes is the frame's size on the wire, its size field included.
	Bytes int
	// Since is the cluster time it began to be held.
	Since time.Time
	// Fields are the fields Summarize decodes; Err says why they could
	// not be.
	Fields []Field
	Err    string
}

// holds are the messages a Links holds, each with its own gate.
type holds struct {
	mu    sync.Mutex
	next  uint64 // the next message's ID
	conns uint64 // the last connection number given out
	byID  map[uint64]*heldMsg
}

// heldMsg is one held message and what its holder waits on.
type heldMsg struct {
	info Held
	// frame is the frame without its size, for the summary; it stays
	// untouched while the message is held.
	frame      []byte
	summarised bool
	// gate is closed when the message is stepped or dropped; dropped
	// says which (set before the close).
	gate    chan struct{}
	dropped bool
}

// newConn numbers a new connection.
func (l *Links) newConn() uint64 {
	l.held.mu.Lock()
	defer l.held.mu.Unlock()
	l.held.conns++
	return l.held.conns
}

// hold registers a message its holder is about to hold; frame must stay
// untouched until the holder's pass. t is the message as traced, with
// its fields when the trace decoded them already.
func (l *Links) hold(info Held, frame []byte, t *tracedMsg) *heldMsg {
	m := &heldMsg{info: info, frame: frame, gate: make(chan struct{})}
	m.info.Fields, m.summarised = t.summary()
	h := &l.held
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID == nil {
		h.byID = make(map[uint64]*heldMsg)
	}
	h.next++
	m.info.ID = h.next
	h.byID[m.info.ID] = m
	return m
}

// pass ends a message's holding, as its holder lets it go (the clock
// runs, its delay passed, it was stepped) or gives it up (its connection
// died), and reports whether it was dropped meanwhile. A message is
// dropped or passes, never both: Drop acts only on registered messages.
func (l *Links) pass(m *heldMsg) (dropped bool) {
	if m == nil {
		return false
	}
	h := &l.held
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byID, m.info.ID)
	m.frame = nil
	return m.dropped
}

// HeldMessages returns the messages the links hold, in the order they
// came, with their fields decoded.
func (l *Links) HeldMessages() []Held {
	h := &l.held
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Held, 0, len(h.byID))
	for _, m := range h.byID {
		if m.released() {
			continue // on its way
		}
		out = append(out, m.summary())
	}
	slices.SortFunc(out, func(a, b Held) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Step delivers the oldest held message that match accepts, and first
// every message held before it on its connection in its direction: a
// connection is a TCP stream, which delivers in order, so no message may
// overtake another on it. It returns the messages it let go, in order,
// the one matched last.
func (l *Links) Step(match func(Held) bool) ([]Held, error) {
	h := &l.held
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.oldest(match)
	if m == nil {
		return nil, ErrNoHeldMessage
	}
	var out []*heldMsg
	for _, o := range h.byID {
		if o.info.Conn == m.info.Conn && o.info.Dir == m.info.Dir && o.info.ID <= m.info.ID && !o.released() {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b *heldMsg) int { return cmp.Compare(a.info.ID, b.info.ID) })
	infos := make([]Held, len(out))
	for i, o := range out {
		infos[i] = o.summary()
		close(o.gate)
	}
	return infos, nil
}

// StepAll delivers every held message, each connection's in order, and
// returns them in the order they came.
func (l *Links) StepAll() []Held {
	h := &l.held
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Held
	for _, m := range h.byID {
		if !m.released() {
			out = append(out, m.summary())
			close(m.gate)
		}
	}
	slices.SortFunc(out, func(a, b Held) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Drop throws away the oldest held message that match accepts, as a
// lossy link does: silently, the connection stays up and the messages
// behind it go on. A dropped request never reaches its server and a
// dropped response never its caller: the caller's request times out.
func (l *Links) Drop(match func(Held) bool) (Held, error) {
	h := &l.held
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.oldest(match)
	if m == nil {
		return Held{}, ErrNoHeldMessage
	}
	info := m.summary()
	m.dropped = true
	close(m.gate)
	return info, nil
}

// oldest is the oldest held message, not yet let go, that match accepts.
// h.mu is held.
func (h *holds) oldest(match func(Held) bool) *heldMsg {
	var first *heldMsg
	for _, m := range h.byID {
		if m.released() || (match != nil && !match(m.info)) {
			continue
		}
		if first == nil || m.info.ID < first.info.ID {
			first = m
		}
	}
	return first
}

// summary returns m's information with its fields decoded, once. h.mu
// is held: decoding under it is safe because the holder rewrites a
// request's buffer only after its pass.
func (m *heldMsg) summary() Held {
	if !m.summarised {
		f, err := Summarize(m.info.Dir, m.info.Key, m.info.Version, m.frame)
		m.info.Fields = f
		if err != nil {
			m.info.Err = err.Error()
		}
		m.summarised = true
	}
	return m.info
}

// released reports whether m's gate is open: it was stepped or dropped
// and its holder has not yet passed it.
func (m *heldMsg) released() bool {
	select {
	case <-m.gate:
		return true
	default:
		return false
	}
}
