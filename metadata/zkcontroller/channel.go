package zkcontroller

import (
	"context"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sendBackoff is the pause before a sender tries a failed request
// again (Kafka's RequestSendThread waits 100 ms).
const sendBackoff = 100 * time.Millisecond

// SendFunc sends req to broker b and waits for its answer until ctx ends.
type SendFunc func(ctx context.Context, b kafkazk.Broker, req kmsg.Request) (kmsg.Response, error)

// ChannelStats are one broker's queue and sender: what is waiting, what
// is on the wire, and what went.
type ChannelStats struct {
	Broker int32
	// Queued are the requests waiting behind the one in flight.
	Queued int
	// InFlight is the API key of the request on the wire, -1 if none.
	InFlight int16
	// Sent counts the requests answered, by API key, and Bytes their
	// encoded size.
	Sent  map[int16]int64
	Bytes int64
	// Retries counts the sends that failed and were tried again.
	Retries int64
}

// queued is one request and what to do with its answer.
type queued struct {
	req  kmsg.Request
	done func(kmsg.Response)
}

// brokerSender is one broker's queue and the goroutine that sends it in
// order, one request at a time, trying each until it is answered
// (Kafka's RequestSendThread).
type brokerSender struct {
	broker kafkazk.Broker
	send   SendFunc
	clock  *clock.Clock

	mu    sync.Mutex
	queue []queued
	stats ChannelStats
	wake  chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func newBrokerSender(b kafkazk.Broker, send SendFunc, clk *clock.Clock) *brokerSender {
	s := &brokerSender{broker: b, send: send, clock: clk, wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.stats = ChannelStats{Broker: b.ID, InFlight: -1, Sent: map[int16]int64{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.run()
	return s
}

func (s *brokerSender) enqueue(req kmsg.Request, done func(kmsg.Response)) {
	s.mu.Lock()
	s.queue = append(s.queue, queued{req, done})
	s.stats.Queued = len(s.queue)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *brokerSender) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			select {
			case <-s.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		q := s.queue[0]
		s.stats.InFlight = q.req.Key()
		s.mu.Unlock()
		resp, ok := s.sendUntilAnswered(q.req)
		s.mu.Lock()
		s.queue = s.queue[1:]
		s.stats.Queued, s.stats.InFlight = len(s.queue), -1
		if ok {
			s.stats.Sent[q.req.Key()]++
			s.stats.Bytes += int64(len(q.req.AppendTo(nil)))
		}
		s.mu.Unlock()
		if !ok {
			return
		}
		if q.done != nil {
			q.done(resp)
		}
	}
}

// sendUntilAnswered sends req until it is answered or the sender stops.
func (s *brokerSender) sendUntilAnswered(req kmsg.Request) (kmsg.Response, bool) {
	for {
		resp, err := s.send(s.ctx, s.broker, req)
		if err == nil {
			return resp, true
		}
		s.mu.Lock()
		s.stats.Retries++
		s.mu.Unlock()
		select {
		case <-s.ctx.Done():
			return nil, false
		case <-s.clock.After(sendBackoff):
		}
	}
}

func (s *brokerSender) snapshot() ChannelStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Sent = make(map[int16]int64, len(s.stats.Sent))
	for k, v := range s.stats.Sent {
		st.Sent[k] = v
	}
	return st
}

// stop ends the sender and waits for it; what was queued is dropped, as
// Kafka drops a removed broker's queue.
func (s *brokerSender) stop() {
	s.cancel()
	<-s.done
}

// channelManager is the controller's senders, one per live broker
// (Kafka's ControllerChannelManager). Only the event loop changes the
// set; Stats may be read from anywhere.
type channelManager struct {
	send  SendFunc
	clock *clock.Clock

	mu      sync.Mutex
	senders map[int32]*brokerSender
}

func newChannelManager(send SendFunc, clk *clock.Clock) *channelManager {
	return &channelManager{send: send, clock: clk, senders: map[int32]*brokerSender{}}
}

// add starts a sender for b, replacing one for an earlier registration.
func (m *channelManager) add(b kafkazk.Broker) {
	m.remove(b.ID)
	s := newBrokerSender(b, m.send, m.clock)
	m.mu.Lock()
	m.senders[b.ID] = s
	m.mu.Unlock()
}

// remove stops broker id's sender, if any.
func (m *channelManager) remove(id int32) {
	m.mu.Lock()
	s := m.senders[id]
	delete(m.senders, id)
	m.mu.Unlock()
	if s != nil {
		s.stop()
	}
}

// enqueue queues req for broker id; a broker without a sender (gone)
// gets nothing.
func (m *channelManager) enqueue(id int32, req kmsg.Request, done func(kmsg.Response)) {
	m.mu.Lock()
	s := m.senders[id]
	m.mu.Unlock()
	if s != nil {
		s.enqueue(req, done)
	}
}

// stopAll stops every sender.
func (m *channelManager) stopAll() {
	m.mu.Lock()
	ids := make([]int32, 0, len(m.senders))
	for id := range m.senders {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		m.remove(id)
	}
}

func (m *channelManager) stats() []ChannelStats {
	m.mu.Lock()
	ss := make([]*brokerSender, 0, len(m.senders))
	for _, s := range m.senders {
		ss = append(ss, s)
	}
	m.mu.Unlock()
	out := make([]ChannelStats, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.snapshot())
	}
	return out
}
