package datasim

import (
	"errors"
	"time"

	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errTimeout is a request whose answer did not come within its timeout.
var errTimeout = errors.New("request timed out")

// followLoop drives a follower broker's fetcher.Machine from the event
// queue as fetcher.Thread drives it from a goroutine: truncate, build a
// fetch, send it, apply the answer (or the timeout), flush what it
// appended, reset what was out of range, and again; with nothing to
// fetch, wait out the machine's idle wait.
type followLoop struct {
	b       *broker
	m       *fetcher.Machine
	stopped bool
	busy    bool
	token   int // of the wake-up that counts
}

func (b *broker) fetcherConfig() fetcher.Config {
	return fetcher.Config{
		BrokerID:     b.id,
		BrokerEpoch:  func() int64 { return b.epoch },
		FetchWaitMax: fetchWaitMax, FetchBackoff: fetchBackoff, SocketTimeout: socketTimeout,
		// Small, so that catching up takes many fetches.
		FetchMaxBytes: int32(1 << (9 + b.s.rng.IntN(4))), FetchResponseMaxBytes: 8 << 10,
	}
}

// fetchFrom has the fetcher follow leader in epoch: a new machine for a
// new source broker (the old thread's partition moves), the same one for
// a new epoch of the same leader.
func (b *broker) fetchFrom(leader, epoch int32) {
	if b.follow == nil || b.follow.m.SourceBroker() != leader {
		b.stopFetching()
		b.follow = &followLoop{b: b, m: fetcher.NewMachine(b.fetcherConfig(), 0, leader)}
	}
	b.follow.m.AddPartitions(map[fetcher.TopicPartition]fetcher.InitialFetchState{
		tp: {Leader: leader, LeaderEpoch: epoch, TopicID: topicID, Replica: replica{b, b.p}, InitOffset: -1},
	})
	b.fetchingFrom, b.fetchingEpoch = leader, epoch
	b.follow.wake(0)
}

func (b *broker) stopFetching() {
	if b.follow != nil {
		b.follow.stopped = true
		b.follow = nil
	}
	b.fetchingFrom, b.fetchingEpoch = -1, -1
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
	if failed := l.m.Failed(); len(failed) > 0 {
		s.record("broker %d fetcher gave up on %v", l.b.id, failed)
	}
	f := l.m.BuildFetch(s.now)
	if f == nil {
		l.wake(l.m.IdleWait(s.now))
		return
	}
	l.busy = true
	leader := l.m.SourceBroker()
	l.request(leader, "fetch", f.Request, socketTimeout+fetchWaitMax, func(resp kmsg.Response, err error) {
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
	s.net.send(from, leader, what, func() {
		s.brokers[leader].serve(req, func(resp kmsg.Response) {
			wire := decode(resp)
			s.net.send(leader, from, what+" answer", func() { finish(wire, nil) })
		})
	})
	l.b.later(timeout, what+" timeout", func() { finish(nil, errTimeout) })
}

// handle applies a fetch answer, then flushes after a seeded fsync time,
// then resets the partitions out of range.
func (l *followLoop) handle(f *fetcher.Fetch, resp kmsg.Response, err error) {
	s := l.b.s
	next := l.m.HandleFetchResponse(f, resp, err, s.now)
	if err != nil {
		s.record("broker %d fetch from %d failed: %v", l.b.id, l.m.SourceBroker(), err)
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
	s.record("broker %d fetch offset out of range at %d", l.b.id, l.b.p.LogEndOffset())
	l.request(leader, "list offsets", l.m.ListOffsetsRequest(r, fetcher.LatestTimestamp), socketTimeout, func(resp kmsg.Response, err error) {
		latest, err := fetcher.ListedOffset(r, resp, err)
		if err != nil {
			l.m.HandleOffsets(r, 0, 0, err, s.now)
			l.outOfRange(rs[1:])
			return
		}
		l.request(leader, "list offsets", l.m.ListOffsetsRequest(r, fetcher.EarliestTimestamp), socketTimeout, func(resp kmsg.Response, err error) {
			earliest, err := fetcher.ListedOffset(r, resp, err)
			l.m.HandleOffsets(r, latest, earliest, err, s.now)
			l.outOfRange(rs[1:])
		})
	})
}
