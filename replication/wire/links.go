package wire

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// LinkID names one direction between two nodes: traffic from From to To.
type LinkID struct {
	From int32
	To   int32
}

// LinkState is the faults on one direction of a link. The zero value is a
// healthy link.
type LinkState struct {
	// Down partitions the direction: nothing From sends reaches To. See
	// Links for what that does to requests and responses.
	Down bool
	// Delay holds every message back this long.
	Delay time.Duration
	// Jitter adds a uniformly random extra delay in [0, Jitter].
	Jitter time.Duration
	// Loss is the probability in [0, 1] that a message is dropped.
	Loss float64
	// BandwidthBytesPerSec limits the direction's throughput; 0 means
	// unlimited. Messages queue behind each other as on a serial line.
	BandwidthBytesPerSec int64
}

// Links is the cluster's switchboard: the faults of every direction between
// nodes. A Client of node A talking to node B consults link A→B for each
// request it sends (down: refused and the connection cut; loss: silently not
// sent; delay and bandwidth: held back in order) and link B→A for each
// response (down or loss: dropped, so the request times out; delay and
// bandwidth: held back in order). A one-way partition A→B therefore refuses
// A's requests to B and drops A's responses to B's requests, while B's
// requests still reach A.
//
// Links is safe for concurrent use. Changes apply to the next message, and a
// direction going down cuts established connections at once; healing needs
// no restart, the next request redials.
type Links struct {
	mu       sync.Mutex
	links    map[LinkID]*link
	rng      *rand.Rand
	watchers map[LinkID]map[*func()]struct{}
	// held are the messages the links hold, for stepping.
	held holds
	// trace keeps the latest messages, for the space-time diagram.
	trace trace
}

type link struct {
	state LinkState
	// free is when the line finishes sending what it already carries,
	// for the bandwidth limit.
	free time.Time
}

// NewLinks returns healthy links whose loss and jitter draw from a
// generator seeded with seed, so a scenario's faults can be replayed.
func NewLinks(seed uint64) *Links {
	return &Links{
		links:    make(map[LinkID]*link),
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		watchers: make(map[LinkID]map[*func()]struct{}),
	}
}

// Set replaces the faults of one direction.
func (l *Links) Set(id LinkID, s LinkState) error {
	switch {
	case s.Delay < 0 || s.Jitter < 0:
		return fmt.Errorf("link %d→%d: negative delay %v or jitter %v", id.From, id.To, s.Delay, s.Jitter)
	case !(s.Loss >= 0 && s.Loss <= 1): // also rejects NaN
		return fmt.Errorf("link %d→%d: loss %v outside [0, 1]", id.From, id.To, s.Loss)
	case s.BandwidthBytesPerSec < 0:
		return fmt.Errorf("link %d→%d: negative bandwidth %d", id.From, id.To, s.BandwidthBytesPerSec)
	}
	var cut []func()
	l.mu.Lock()
	if k := l.links[id]; k != nil {
		k.state = s
	} else if s != (LinkState{}) {
		l.links[id] = &link{state: s}
	}
	if s.Down {
		for fn := range l.watchers[id] {
			cut = append(cut, *fn)
		}
	}
	l.mu.Unlock()
	for _, fn := range cut {
		fn()
	}
	return nil
}

// Get returns the faults of one direction.
func (l *Links) Get(id LinkID) LinkState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := l.links[id]; k != nil {
		return k.state
	}
	return LinkState{}
}

// Heal clears the faults of one direction.
func (l *Links) Heal(id LinkID) {
	l.mu.Lock()
	delete(l.links, id)
	l.mu.Unlock()
}

// HealAll clears every fault.
func (l *Links) HealAll() {
	l.mu.Lock()
	clear(l.links)
	l.mu.Unlock()
}

// Faults returns every direction that is not healthy.
func (l *Links) Faults() map[LinkID]LinkState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[LinkID]LinkState)
	for id, k := range l.links {
		if k.state != (LinkState{}) {
			out[id] = k.state
		}
	}
	return out
}

// watchDown calls cut whenever id is set down, until the returned cancel
// is called. cut runs on the goroutine that called Set and must not block.
func (l *Links) watchDown(id LinkID, cut func()) (cancel func()) {
	key := &cut
	l.mu.Lock()
	if l.watchers[id] == nil {
		l.watchers[id] = make(map[*func()]struct{})
	}
	l.watchers[id][key] = struct{}{}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.watchers[id], key)
		if len(l.watchers[id]) == 0 {
			delete(l.watchers, id)
		}
		l.mu.Unlock()
	}
}

// verdict is what a link does to one message.
type verdict struct {
	down    bool
	lost    bool
	release time.Time // when the message may be delivered
}

// transit decides the fate of an n-byte message entering link id at time at.
func (l *Links) transit(id LinkID, n int, at time.Time) verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.links[id]
	if k == nil {
		return verdict{release: at}
	}
	s := k.state
	switch {
	case s.Down:
		return verdict{down: true}
	case s.Loss > 0 && l.rng.Float64() < s.Loss:
		return verdict{lost: true}
	}
	release := at
	if s.BandwidthBytesPerSec > 0 {
		if k.free.After(release) {
			release = k.free
		}
		release = release.Add(time.Duration(int64(n) * int64(time.Second) / s.BandwidthBytesPerSec))
		k.free = release
	}
	d := s.Delay
	if s.Jitter > 0 {
		d += time.Duration(l.rng.Int64N(int64(s.Jitter) + 1))
	}
	return verdict{release: release.Add(d)}
}
