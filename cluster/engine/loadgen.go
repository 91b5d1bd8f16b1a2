package engine

import (
	"context"
	"fmt"
	"github.com/kraftlab/kraftlab/cluster"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// The load generator's pacing.
const (
	// loadTick is how often the generator sends what the rate calls for
	// and collects finished appends: records go out in batches of about
	// rate × loadTick, each one Append.
	loadTick = 10 * time.Millisecond
	// loadCatchUp bounds the backlog a late tick sends at once; the rest
	// of a longer gap is skipped, as an open-loop producer that fell
	// behind would drop it.
	loadCatchUp = 100 * time.Millisecond
	// maxLoadAppendBytes bounds one Append's records.
	maxLoadAppendBytes = 1 << 20
	// maxLoadInFlightBytes bounds the bytes waiting to commit on one
	// node: a leader that cannot commit (cut off from its majority) holds
	// the load back instead of piling records up.
	maxLoadInFlightBytes = 16 << 20
)

// loadGen is the engine's background load: one goroutine that appends
// records on the current leader through quorum.Node.Append at the rate
// asked for, follows the leader when it changes, pauses while there is
// none, and counts what the quorum commits. It never waits for a commit:
// it polls the appends in flight on its tick.
type loadGen struct {
	e    *engine
	wake chan struct{} // capacity one: the settings changed
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex // guards view
	view view.Load
}

// flight is one Append waiting for its commit.
type flight struct {
	c     *quorum.Commit
	node  int32
	n     int
	bytes int
}

func newLoadGen(e *engine) *loadGen {
	g := &loadGen{
		e:    e,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
		view: view.Load{NodeID: view.NoLeader},
	}
	go g.run()
	return g
}

// set changes the rate and size; it never waits for the goroutine. It
// fails once the generator is closed.
func (g *loadGen) set(recordsPerSec, recordBytes int) error {
	select {
	case <-g.stop:
		return cluster.ErrClosed
	default:
	}
	g.mu.Lock()
	g.view.RecordsPerSec, g.view.RecordBytes = recordsPerSec, recordBytes
	if recordsPerSec == 0 {
		g.view.NodeID = view.NoLeader
	}
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	return nil
}

// snapshot returns the load's view.
func (g *loadGen) snapshot() view.Load {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.view
}

// close stops the goroutine and waits for it. Appends still in flight
// finish with their nodes.
func (g *loadGen) close() {
	close(g.stop)
	<-g.done
}

// loadState is the goroutine's own state.
type loadState struct {
	rate, size int
	// owed is the part of a record the rate called for by last and the
	// generator has not sent yet.
	last time.Time
	owed float64
	// seq numbers the records, for their values.
	seq      int64
	inflight []flight
}

// due returns how many records the rate calls for since the last call.
func (s *loadState) due(now time.Time) int64 {
	owed := s.owed + now.Sub(s.last).Seconds()*float64(s.rate)
	s.last = now
	n := int64(owed)
	s.owed = owed - float64(n)
	return n
}

func (g *loadGen) run() {
	defer close(g.done)
	var s loadState
	ticker := g.e.clock.NewTicker(loadTick)
	ticker.Stop()
	defer ticker.Stop()
	ticking := false
	for {
		var tick <-chan time.Time
		if ticking {
			tick = ticker.C
		}
		select {
		case <-g.stop:
			return
		case <-g.wake:
			g.mu.Lock()
			rate, size := g.view.RecordsPerSec, g.view.RecordBytes
			g.mu.Unlock()
			if rate != s.rate || size != s.size {
				s.rate, s.size = rate, size
				s.last, s.owed = g.e.clock.Now(), 0
			}
		case <-tick:
		}
		now := g.e.clock.Now()
		d := loadDelta{node: view.NoLeader}
		s.collect(&d, now)
		if s.rate > 0 {
			g.send(&s, &d, now)
		}
		g.apply(&s, &d)
		if active := s.rate > 0 || len(s.inflight) > 0; active != ticking {
			ticking = active
			if ticking {
				ticker.Reset(loadTick)
			} else {
				ticker.Stop()
			}
		}
	}
}

// loadDelta is what one tick changed, applied to the view at once.
type loadDelta struct {
	committed, failed, skipped int64
	node                       int32
	err                        error
	errAt                      time.Time
}

// collect takes the finished appends off the in-flight list.
func (s *loadState) collect(d *loadDelta, now time.Time) {
	kept := s.inflight[:0]
	for _, f := range s.inflight {
		select {
		case <-f.c.Done():
		default:
			kept = append(kept, f)
			continue
		}
		if err := f.c.Err(); err != nil {
			d.failed += int64(f.n)
			d.err, d.errAt = err, now
			continue
		}
		d.committed += int64(f.n)
	}
	clear(s.inflight[len(kept):])
	s.inflight = kept
}

// send appends the records due since the last tick on the leader.
func (g *loadGen) send(s *loadState, d *loadDelta, now time.Time) {
	n := s.due(now)
	if most := max(int64(loadCatchUp)*int64(s.rate)/int64(time.Second), 1); n > most {
		d.skipped += n - most
		n = most
	}
	leader, epoch := g.e.loadLeader()
	if leader == nil {
		d.skipped += n
		return
	}
	d.node = leader.id
	waiting := 0
	for _, f := range s.inflight {
		if f.node == leader.id {
			waiting += f.bytes
		}
	}
	if room := max(int64(maxLoadInFlightBytes-waiting)/int64(s.size), 0); n > room {
		d.skipped += n - room
		n = room
	}
	per := int64(max(maxLoadAppendBytes/s.size, 1))
	for n > 0 {
		k := min(n, per)
		recs, err := cluster.LoadRecords(s.seq, int(k), s.size)
		if err != nil {
			// ValidateLoad keeps sizes a load record can have; say so if not.
			d.skipped += n
			d.err, d.errAt = err, now
			return
		}
		s.seq += k
		n -= k
		s.inflight = append(s.inflight, flight{c: leader.q.Append(epoch, recs), node: leader.id, n: int(k), bytes: int(k) * s.size})
	}
}

// apply publishes a tick's changes to the view.
func (g *loadGen) apply(s *loadState, d *loadDelta) {
	var inflight int64
	for _, f := range s.inflight {
		inflight += int64(f.n)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	v := &g.view
	v.Committed += d.committed
	v.Failed += d.failed
	v.Skipped += d.skipped
	v.InFlight = inflight
	switch {
	case v.RecordsPerSec == 0: // stopped meanwhile
		v.NodeID = view.NoLeader
	case s.rate > 0:
		v.NodeID = d.node
	}
	if d.err != nil {
		v.LastError = d.err.Error()
		v.LastErrorTimestamp = d.errAt.UnixMilli()
	}
}

// loadLeader is the node the load appends to and the epoch it leads: the
// running controller that leads the highest epoch and accepts appends, or
// nil. An old leader cut off from the majority still leads its older epoch
// for a while; the load moves on to the new leader.
func (e *engine) loadLeader() (*engineNode, int32) {
	var best *engineNode
	var bestEpoch int32
	for _, n := range e.all() {
		if n.kind != view.KindController {
			continue
		}
		st := n.q.Status()
		if st.Running() && st.Writable && st.Role == raft.Leader && (best == nil || st.Epoch > bestEpoch) {
			best, bestEpoch = n, st.Epoch
		}
	}
	return best, bestEpoch
}

// SetLoad implements Engine.
func (e *engine) SetLoad(_ context.Context, recordsPerSec, recordBytes int) error {
	if err := cluster.ValidateLoad(recordsPerSec, recordBytes); err != nil {
		return cluster.Errorf(cluster.ErrBadAction, "%v", err)
	}
	if err := e.load.set(recordsPerSec, recordBytes); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}
