package wire

import (
	"strconv"
	"sync"
	"time"
)

// TraceCapacity is how many messages a Links' trace keeps: the latest
// ones, the older ones overwritten.
const TraceCapacity = 4096

// traceFrameBytes is the most of a frame the trace keeps a copy of, for
// a summary asked later: a quorum's Fetch, Vote or heartbeat fits, a
// Fetch response carrying records mostly does not. The copies live in
// one arena, TraceCapacity slots of this size, so keeping one allocates
// nothing.
const traceFrameBytes = 256

// Fate is what became of a traced message.
type Fate uint8

// The fates.
const (
	// FateInFlight: on its way, a link holds it (the clock is paused, a
	// delay runs, or it queues behind one that is held).
	FateInFlight Fate = iota + 1
	// FateDelivered: a request written to its server, a response handed
	// to its caller.
	FateDelivered
	// FateDropped: dropped while held (Links.Drop).
	FateDropped
	// FateLost: the link lost it (its loss) or was down.
	FateLost
	// FateCut: its connection died while a link held it.
	FateCut
)

func (f Fate) String() string {
	switch f {
	case FateInFlight:
		return "in flight"
	case FateDelivered:
		return "delivered"
	case FateDropped:
		return "dropped"
	case FateLost:
		return "lost"
	case FateCut:
		return "cut"
	}
	return "fate(" + strconv.Itoa(int(f)) + ")"
}

// TraceEntry is one message that crossed the links: a request when its
// Client sends it, a response when its Client reads it.
type TraceEntry struct {
	// Seq numbers the links' messages from 1, in the order they entered
	// their link.
	Seq  uint64
	Link LinkID
	// Conn numbers the connection it travels on; a request and its
	// response share Conn and Corr.
	Conn         uint64
	Dir          Direction
	Key, Version int16
	Corr         int32
	// Bytes is the frame's size on the wire, its size field included.
	Bytes int
	// Sent is the cluster time it entered its link (a request: when its
	// caller sent it; a response: when its Client read it), Delivered
	// the cluster time it left, zero unless Fate is FateDelivered.
	Sent, Delivered time.Time
	// SentOrder and EndOrder place its send and its end among the
	// trace's events (one counter for both): cluster times tie while the
	// clock is paused, the order does not. EndOrder is 0 while in flight
	// and for a message lost at once.
	SentOrder, EndOrder uint64
	Fate                Fate
	// Held is its ID among the held messages (Step, Drop), 0 if no link
	// held it.
	Held uint64
	// Fields are its decoded fields (Summarize), when the trace could
	// afford them: a frame of up to 256 bytes is copied and decoded when
	// the trace is read; a larger one only while the clock is paused or
	// slowed. SummaryErr says why a kept frame did not decode.
	Fields     []Field
	SummaryErr string
}

// trace is the Links' ring of messages. Recording one takes its lock once
// (twice for a message a link holds: once more when it ends), copies a
// small frame into the arena, and allocates nothing: the ring and the
// arena (about 1.4 MB together) are made whole with the first message.
type trace struct {
	mu     sync.Mutex
	ring   []traceSlot // TraceCapacity slots, message seq in slot (seq-1) % TraceCapacity
	arena  []byte      // traceFrameBytes per slot
	seq    uint64      // messages recorded
	events uint64      // sends and ends recorded
}

// traceSlot is a TraceEntry as the ring keeps it: times in Unix
// nanoseconds, the frame's copy in the arena.
type traceSlot struct {
	seq                 uint64
	link                LinkID
	conn                uint64
	dir                 Direction
	fate                Fate
	key, version        int16
	corr                int32
	bytes               int32
	frameLen            int16 // bytes of the frame in the arena; 0: none kept
	sent, delivered     int64
	sentOrder, endOrder uint64
	held                uint64
	// sum is its summary once decoded, nil before.
	sum *traceSummary
}

// traceSummary is a traced message's decoded fields, or why its frame
// did not decode.
type traceSummary struct {
	fields []Field
	err    string
}

// record adds a message entering its link at sent (cluster time): in
// flight, or with fate delivered at now, or lost. frame is its frame
// without the size field (copied when small), fields its summary when
// the caller decoded it. It returns the message's Seq, for end.
func (t *trace) record(s traceSlot, frame []byte, now time.Time) uint64 {
	t.mu.Lock()
	t.seq++
	s.seq = t.seq
	t.events++
	s.sentOrder = t.events
	if s.fate == FateDelivered {
		t.events++
		s.endOrder = t.events
		s.delivered = now.UnixNano()
	}
	if t.ring == nil {
		t.ring = make([]traceSlot, TraceCapacity)
		t.arena = make([]byte, TraceCapacity*traceFrameBytes)
	}
	i := int((s.seq - 1) % TraceCapacity)
	if s.sum == nil && len(frame) <= traceFrameBytes {
		s.frameLen = int16(copy(t.arena[i*traceFrameBytes:], frame))
	}
	t.ring[i] = s
	t.mu.Unlock()
	return s.seq
}

// end ends message seq, still in flight, with fate at now (cluster time),
// and its summary if the caller has one (a held message listed
// meanwhile). A message the ring already overwrote is left alone.
func (t *trace) end(seq uint64, fate Fate, now time.Time, sum *traceSummary) {
	if seq == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i := int((seq - 1) % TraceCapacity)
	if t.ring == nil || t.ring[i].seq != seq || t.ring[i].fate != FateInFlight {
		return
	}
	s := &t.ring[i]
	s.fate = fate
	if fate == FateDelivered {
		s.delivered = now.UnixNano()
	}
	if fate != FateLost {
		t.events++
		s.endOrder = t.events
	}
	if s.sum == nil && sum != nil {
		s.sum, s.frameLen = sum, 0
	}
}

// entries returns the last n messages (all kept, when n <= 0 or more than
// the ring holds), oldest first, decoding the kept frames of those not
// yet summarised. The decoding happens outside the lock, and its results
// go back to the ring so that the next read need not decode again.
func (t *trace) entries(n int) []TraceEntry {
	type pending struct {
		at    int // index in out
		frame []byte
	}
	t.mu.Lock()
	kept := int(min(t.seq, TraceCapacity))
	if n <= 0 || n > kept {
		n = kept
	}
	out := make([]TraceEntry, n)
	var todo []pending
	for j := range n {
		seq := t.seq - uint64(n-1-j)
		i := int((seq - 1) % TraceCapacity)
		s := &t.ring[i]
		out[j] = s.entry()
		if s.sum == nil && s.frameLen > 0 {
			f := make([]byte, s.frameLen)
			copy(f, t.arena[i*traceFrameBytes:])
			todo = append(todo, pending{j, f})
		}
	}
	t.mu.Unlock()
	if len(todo) == 0 {
		return out
	}
	for _, p := range todo {
		e := &out[p.at]
		f, err := Summarize(e.Dir, e.Key, e.Version, p.frame)
		e.Fields = f
		if err != nil {
			e.SummaryErr = err.Error()
		}
	}
	t.mu.Lock()
	for _, p := range todo {
		e := out[p.at]
		s := &t.ring[int((e.Seq-1)%TraceCapacity)]
		if s.seq == e.Seq && s.sum == nil {
			s.sum, s.frameLen = &traceSummary{e.Fields, e.SummaryErr}, 0
		}
	}
	t.mu.Unlock()
	return out
}

func (s *traceSlot) entry() TraceEntry {
	e := TraceEntry{
		Seq: s.seq, Link: s.link, Conn: s.conn, Dir: s.dir, Key: s.key, Version: s.version, Corr: s.corr,
		Bytes: int(s.bytes), Sent: time.Unix(0, s.sent), SentOrder: s.sentOrder, EndOrder: s.endOrder,
		Fate: s.fate, Held: s.held,
	}
	if s.sum != nil {
		e.Fields, e.SummaryErr = s.sum.fields, s.sum.err
	}
	if s.delivered != 0 {
		e.Delivered = time.Unix(0, s.delivered)
	}
	return e
}

// Trace returns the last n messages that crossed the links (every one
// the trace keeps, at most TraceCapacity, when n <= 0), oldest first.
func (l *Links) Trace(n int) []TraceEntry { return l.trace.entries(n) }
