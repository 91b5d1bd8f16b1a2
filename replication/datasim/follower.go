package datasim

import (
	"errors"
	"time"

	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errTimeout is a request whose answer did not come within its timeout.
var errTimeout = errors.New("request timed out")

// followLoop drives one fetcher.Machine of a follower broker from the
// event queue as fetcher.Thread drives it from a goroutine: truncate,
// build a fetch, send it, apply the answer (or the timeout), flush what it
// appended, reset what was out of range, and again; with nothing to
// fetch, wait out the machine's idle wait or new partitions.
type followLoop struct {
	b       *broker
	m       *fetcher.Machine
	stopped bool
	busy    bool
	token   int // of the wake-up that counts
}

func (b *broker) fetcherConfig() fetcher.Config {
	cfg := fetcher.Config{
		BrokerID:     b.id,
		BrokerEpoch:  func() int64 { return b.epoch },
		FetchWaitMax: fetchWaitMax, FetchBackoff: fetchBackoff, SocketTimeout: socketTimeout,
		// Small, so that catching up takes many fetches and an answer
		// often cannot hold every partition.
		FetchMaxBytes: int32(1 << (9 + b.s.rng.IntN(4))), FetchResponseMaxBytes: 8 << 10,
	}
	if b.s.cfg.Partitions > 1 {
		cfg.FetchResponseMaxBytes = int32(1 << (10 + b.s.rng.IntN(4)))
	}
	return cfg
}

// fetchFrom has the partition fetched from leader in epoch: it leaves any
// other source broker's fetcher (stopped when left with none) and joins
// leader's, started if need be, as Manager.AddPartitions moves it.
func (b *broker) fetchFrom(h *host, leader, epoch int32) {
	b.removeFromLoops(h, leader)
	l := b.loops[leader]
	if l == nil {
		l = &followLoop{b: b, m: fetcher.NewMachine(b.fetcherConfig(), 0, leader)}
		b.loops[leader] = l
	}
	l.m.AddPartitions(map[fetcher.TopicPartition]fetcher.InitialFetchState{
		b.s.tpOf(h.idx): {Leader: leader, LeaderEpoch: epoch, TopicID: b.s.cfg.TopicID, Replica: replica{b, h, h.p}, InitOffset: -1},
	})
	h.fetchingFrom, h.fetchingEpoch = leader, epoch
	l.wake(0)
}

// stopFetching takes the partition out of every fetcher.
func (b *broker) stopFetching(h *host) {
	b.removeFromLoops(h, -1)
	h.fetchingFrom, h.fetchingEpoch = -1, -1
}

// removeFromLoops takes the partition out of the fetchers of source
// brokers other than keep, stopping those left with nothing.
func (b *broker) removeFromLoops(h *host, keep int32) {
	for _, leader := range b.s.cfg.Brokers {
		l := b.loops[leader]
		if l == nil || leader == keep {
			continue
		}
		l.m.RemovePartitions([]fetcher.TopicPartition{l.b.s.tpOf(h.idx)})
		if l.m.PartitionCount() == 0 {
			l.stopped = true
			delete(b.loops, leader)
		}
	}
}

// wake schedules the next round after d, replacing any wait scheduled.
func (l *followLoop) wake(d time.Duration) {
	if l.busy || l.stopped {
		return
	}
	l.token++
	tok := l.token
	l.b.s.after(d, "fetcher round", func() {
		if tok == l.token && !l.stopped && !l.busy {
			l.round()
		}
	})
}

func (l *followLoop) round() {
	s := l.b.s
	l.m.MaybeTruncate()
	f := l.m.BuildFetch(s.now())
	if f == nil {
		l.wake(l.m.IdleWait(s.now()))
		return
	}
	l.busy = true
	l.request(l.m.SourceBroker(), "fetch", f.Request, socketTimeout+fetchWaitMax, func(resp kmsg.Response, err error) {
		l.handle(f, resp, err)
	})
}

// request sends req to the leader and calls answer once, with the answer
// or errTimeout.
func (l *followLoop) request(leader int32, what string, req kmsg.Request, timeout time.Duration, answer func(kmsg.Response, error)) {
	s := l.b.s
	done := false
	finish := func(resp kmsg.Response, err error) {
		if done || l.stopped {
			return
		}
		done = true
		answer(resp, err)
	}
	from := l.b.id
	s.send(from, leader, what, func() {
		s.brokers[leader].serve(req, func(resp kmsg.Response) {
			wire := decode(resp)
			s.send(leader, from, what+" answer", func() { finish(wire, nil) })
		})
	})
	l.b.later(timeout, what+" timeout", func() { finish(nil, errTimeout) })
}

// handle applies a fetch answer, then flushes after a seeded fsync time,
// then resets the partitions out of range.
func (l *followLoop) handle(f *fetcher.Fetch, resp kmsg.Response, err error) {
	s := l.b.s
	next := l.m.HandleFetchResponse(f, resp, err, s.now())
	if err != nil {
		s.record("broker %d fetch from %d failed: %v", l.b.id, l.m.SourceBroker(), err)
	}
	if failed := l.m.Failed(); len(failed) > 0 {
		s.record("broker %d fetcher gave up on %v", l.b.id, failed)
	}
	if len(next.Flush) == 0 {
		l.outOfRange(next.OutOfRange)
		return
	}
	l.b.later(s.jitter(100*time.Microsecond, 3*time.Millisecond), "follower flush", func() {
		if l.stopped {
			return
		}
		for _, t := range next.Flush {
			if err := t.Replica.Flush(); err != nil {
				l.m.FlushFailed(t, err)
			}
		}
		l.outOfRange(next.OutOfRange)
	})
}

// outOfRange asks the leader for the log end and start of each partition
// in turn, then starts the next round.
func (l *followLoop) outOfRange(rs []fetcher.OutOfRange) {
	s := l.b.s
	if len(rs) == 0 {
		l.busy = false
		l.wake(0)
		return
	}
	r, leader := rs[0], l.m.SourceBroker()
	s.record("broker %d fetch offset of %v out of range", l.b.id, r.Partition())
	l.request(leader, "list offsets", l.m.ListOffsetsRequest(r, fetcher.LatestTimestamp), socketTimeout, func(resp kmsg.Response, err error) {
		latest, err := fetcher.ListedOffset(r, resp, err)
		if err != nil {
			l.m.HandleOffsets(r, 0, 0, err, s.now())
			l.outOfRange(rs[1:])
			return
		}
		l.request(leader, "list offsets", l.m.ListOffsetsRequest(r, fetcher.EarliestTimestamp), socketTimeout, func(resp kmsg.Response, err error) {
			earliest, err := fetcher.ListedOffset(r, resp, err)
			l.m.HandleOffsets(r, latest, earliest, err, s.now())
			l.outOfRange(rs[1:])
		})
	})
}
