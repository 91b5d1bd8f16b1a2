package group

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// shard is the groups of one partition of __consumer_offsets that this
// broker leads (Kafka's GroupCoordinatorShard on its partition's event
// loop, here one mutex): it loads them from the partition when the broker
// becomes its leader, then serves them until the broker stops leading.
type shard struct {
	c         *Coordinator
	partition int32
	epoch     int32

	mu sync.Mutex
	// loaded is set once the partition has been read; dead once the
	// broker stopped leading it.
	loaded, dead bool
	groups       map[string]*Group
	// cgroups are the consumer groups (KIP-848); a group id is in groups
	// or in cgroups, never both.
	cgroups map[string]*ConsumerGroup
	offsets map[string]map[TopicPartition]Committed
	timer   *clock.Timer

	// outMu orders the appends the groups asked for: they are queued
	// under mu and sent outside it, in order, since an append may answer
	// on the calling goroutine.
	outMu    sync.Mutex
	outbox   []pendingAppend
	flushing bool
	// gone is dead as flush reads it, without mu: what a shard that no
	// longer leads still had queued is answered, not sent, so that a
	// term's writes never land in the next one's log.
	gone atomic.Bool

	cancel context.CancelFunc
}

type pendingAppend struct {
	records []storage.Record
	done    func(base int64, code int16)
}

func newShard(c *Coordinator, p, epoch int32) *shard {
	return &shard{c: c, partition: p, epoch: epoch, groups: map[string]*Group{}, cgroups: map[string]*ConsumerGroup{}, offsets: map[string]map[TopicPartition]Committed{}}
}

// errorLocked is the error a request to the shard gets while it cannot
// serve: it is loading, or no longer leads. s.mu is held.
func (s *shard) errorLocked() int16 {
	switch {
	case s.dead:
		return kerr.NotCoordinator.Code
	case !s.loaded:
		return kerr.CoordinatorLoadInProgress.Code
	}
	return 0
}

// do runs f on the loaded shard at the clock's time, then sends the
// appends f's groups asked for and rearms the timer; it returns the
// error instead if the shard cannot serve.
func (s *shard) do(f func(now time.Time)) int16 {
	s.mu.Lock()
	if code := s.errorLocked(); code != 0 {
		s.mu.Unlock()
		return code
	}
	now := s.c.clock.Now()
	f(now)
	s.afterLocked()
	s.mu.Unlock()
	s.flush()
	return 0
}

// afterLocked queues the groups' stores and rearms the timer. s.mu is
// held.
func (s *shard) afterLocked() {
	var next time.Time
	for id, g := range s.groups {
		for _, st := range g.TakeStores() {
			s.queueStoreLocked(g, st)
		}
		if g.Unused() && len(s.offsets[id]) == 0 {
			delete(s.groups, id)
			continue
		}
		if d := g.NextDeadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	for id, g := range s.cgroups {
		if !g.stored && len(g.members) == 0 && !g.dead {
			delete(s.cgroups, id) // made by a join that failed
			continue
		}
		if recs := g.TakeRecords(); len(recs) > 0 {
			s.queueLocked(recs, func(int64, int16) {})
		}
		if g.dead {
			delete(s.cgroups, id)
			continue
		}
		if d := g.NextDeadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	if s.dead || next.IsZero() {
		if s.timer != nil {
			s.timer.Stop()
		}
		return
	}
	wait := s.c.clock.Until(next)
	if s.timer == nil {
		s.timer = s.c.clock.AfterFunc(wait, s.tick)
		return
	}
	s.timer.Reset(wait)
}

// queueStoreLocked queues the write of a group's metadata; its outcome
// goes back to the group.
func (s *shard) queueStoreLocked(g *Group, st *Store) {
	rec := GroupMetadataRecord(g.ID(), st.Value)
	s.queueLocked([]storage.Record{rec}, func(_ int64, code int16) {
		s.mu.Lock()
		if !s.dead && s.groups[g.ID()] == g {
			g.Stored(s.c.clock.Now(), st, appendError(code, false))
			s.afterLocked()
		}
		s.mu.Unlock()
		s.flush()
	})
}

func (s *shard) queueLocked(records []storage.Record, done func(base int64, code int16)) {
	s.outMu.Lock()
	s.outbox = append(s.outbox, pendingAppend{records, done})
	s.outMu.Unlock()
}

// flush sends the queued appends in order. One caller sends at a time,
// outside outMu: an append that fails at once answers on this goroutine,
// and its answer may queue and flush more, which the running flush then
// sends.
func (s *shard) flush() {
	s.outMu.Lock()
	if s.flushing {
		s.outMu.Unlock()
		return
	}
	s.flushing = true
	for len(s.outbox) > 0 {
		a := s.outbox[0]
		s.outbox = s.outbox[1:]
		s.outMu.Unlock()
		if s.gone.Load() {
			a.done(-1, kerr.NotLeaderForPartition.Code)
		} else {
			s.c.log.Append(s.partition, a.records, a.done)
		}
		s.outMu.Lock()
	}
	s.flushing = false
	s.outMu.Unlock()
}

// tick runs the groups' timers.
func (s *shard) tick() {
	s.do(func(now time.Time) {
		for _, g := range s.groups {
			if d := g.NextDeadline(); !d.IsZero() && !now.Before(d) {
				g.Tick(now)
			}
		}
		var topics Topics
		for _, g := range s.cgroups {
			if d := g.NextDeadline(); !d.IsZero() && !now.Before(d) {
				if topics == nil {
					topics = s.c.topics()
				}
				g.Tick(now, topics)
			}
		}
	})
}

// unload drops the shard's groups: the broker no longer leads the
// partition. Requests that wait are answered NOT_COORDINATOR.
func (s *shard) unload() {
	if s.cancel != nil {
		s.cancel()
	}
	s.gone.Store(true)
	s.mu.Lock()
	s.dead = true
	for _, g := range s.groups {
		g.Delete(kerr.NotCoordinator.Code)
	}
	for _, g := range s.cgroups {
		g.Delete()
	}
	s.groups, s.cgroups, s.offsets = nil, nil, nil
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
}

// loadBackoff is how long a load waits for the high watermark to reach
// the log end it must read to, or after a failed read.
const loadBackoff = 10 * time.Millisecond

// load reads the partition from its start to the log end offset it had
// when the broker became leader, once the high watermark has passed it
// (so nothing loaded is ever truncated away), and replays its records
// (Kafka's CoordinatorLoaderImpl).
func (s *shard) load(ctx context.Context) error {
	st := newLoadState()
	var off, target int64 = -1, -1
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logStart, hwm, logEnd, err := s.c.log.Bounds(s.partition)
		if err != nil {
			return fmt.Errorf("offsets partition %d: %w", s.partition, err)
		}
		if target < 0 {
			off, target = logStart, logEnd
		}
		if off >= target {
			break
		}
		if off >= hwm {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-s.c.clock.After(loadBackoff):
			}
			continue
		}
		raw, err := s.c.log.Read(s.partition, off)
		if err != nil {
			return fmt.Errorf("offsets partition %d: read at %d: %w", s.partition, off, err)
		}
		next, err := st.replayBatches(raw, off)
		if err != nil {
			return fmt.Errorf("offsets partition %d: %w", s.partition, err)
		}
		if next <= off {
			return fmt.Errorf("offsets partition %d: no progress reading at %d", s.partition, off)
		}
		off = next
	}
	if st.skipped > 0 {
		s.c.logger.Warn("skipped records that do not decode", "partition", s.partition, "skipped", st.skipped, "first", st.firstBad)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return nil
	}
	now := s.c.clock.Now()
	s.groups, s.offsets = st.groups(s.c.timing, now), st.offsets
	s.cgroups = st.consumerGroups(s.c.timing, now)
	for id := range s.cgroups {
		delete(s.groups, id)
	}
	s.loaded = true
	s.afterLocked()
	return nil
}
