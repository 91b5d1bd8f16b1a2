package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/clock"
)

// topicLoadTick is how often the topic load hands the records that came
// due to its client, as the metadata load does.
const topicLoadTick = 10 * time.Millisecond

// topicLoad produces to one topic at a fixed rate with a real Kafka client
// (franz-go: acks=all, idempotent, round-robin over the partitions), as a
// producer application would, so that the data plane has something to
// replicate. The client finds the partition leaders from the brokers'
// Metadata and follows them across elections by itself.
type topicLoad struct {
	mu      sync.Mutex
	state   view.TopicLoad // settings and the last error
	cl      *kgo.Client
	stop    chan struct{}
	done    chan struct{}
	acked   atomic.Int64
	failed  atomic.Int64
	skipped atomic.Int64
	flying  atomic.Int64
	clock   *clock.Clock // ticks the load: none is sent while paused
}

// SetTopicLoad implements Engine: each topic has a load of its own, and
// setting one leaves the others running.
func (e *engine) SetTopicLoad(_ context.Context, topic string, recordsPerSec, recordBytes int) error {
	v := e.View() // before the lock: the view reads the topic loads
	e.topicLoadMu.Lock()
	defer e.topicLoadMu.Unlock()
	if e.topicLoads == nil {
		return fmt.Errorf("load --topic %s: %w", topic, cluster.ErrClosed)
	}
	if recordsPerSec == 0 {
		if old := e.topicLoads[topic]; old != nil {
			old.close()
			delete(e.topicLoads, topic)
		}
		return nil
	}
	running := make([]view.TopicLoad, 0, len(e.topicLoads))
	for _, l := range e.topicLoads {
		running = append(running, l.snapshot())
	}
	if err := cluster.CheckTopicLoads(running, topic, recordsPerSec, recordBytes); err != nil {
		return cluster.Errorf(cluster.ErrBadAction, "%v", err)
	}
	if _, ok := v.Topic(topic); !ok {
		return fmt.Errorf("%w: no topic %q in the committed metadata (kraftlab topics create %s)", cluster.ErrBadAction, topic, topic)
	}
	var seeds []string
	for _, n := range v.Nodes {
		if n.Kind == view.KindBroker && n.Live() && n.Listener != "" {
			seeds = append(seeds, n.Listener)
		}
	}
	if len(seeds) == 0 {
		return fmt.Errorf("%w: no broker is running to produce to", cluster.ErrBadAction)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.MetadataMinAge(200*time.Millisecond), kgo.ClientID("kraftlab-topic-load"))
	if err != nil {
		return fmt.Errorf("topic load client: %w", err)
	}
	if old := e.topicLoads[topic]; old != nil {
		old.close()
	}
	l := &topicLoad{
		state: view.TopicLoad{Topic: topic, RecordsPerSec: recordsPerSec, RecordBytes: recordBytes},
		cl:    cl, stop: make(chan struct{}), done: make(chan struct{}), clock: e.clock,
	}
	go l.run()
	e.topicLoads[topic] = l
	return nil
}

// topicLoadViews are the topic loads for the view, by topic.
func (e *engine) topicLoadViews() []view.TopicLoad {
	e.topicLoadMu.Lock()
	defer e.topicLoadMu.Unlock()
	out := make([]view.TopicLoad, 0, len(e.topicLoads))
	for _, l := range e.topicLoads {
		out = append(out, l.snapshot())
	}
	slices.SortFunc(out, func(a, b view.TopicLoad) int { return strings.Compare(a.Topic, b.Topic) })
	return out
}

// closeTopicLoads stops every topic load; none starts after it.
func (e *engine) closeTopicLoads() {
	e.topicLoadMu.Lock()
	defer e.topicLoadMu.Unlock()
	for _, l := range e.topicLoads {
		l.close()
	}
	e.topicLoads = nil
}

func (l *topicLoad) snapshot() view.TopicLoad {
	l.mu.Lock()
	s := l.state
	l.mu.Unlock()
	s.Acked, s.Failed, s.Skipped, s.InFlight = l.acked.Load(), l.failed.Load(), l.skipped.Load(), l.flying.Load()
	return s
}

// run hands the client what the rate calls for every tick; beyond a
// second's worth of records waiting for answers it skips, so that a
// cluster that cannot keep up is not buried under a queue.
func (l *topicLoad) run() {
	defer close(l.done)
	t := l.clock.NewTicker(topicLoadTick)
	defer t.Stop()
	start := l.clock.Now()
	var sent int64
	rate, size := int64(l.state.RecordsPerSec), l.state.RecordBytes
	maxFlying := max(rate, 100)
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			due := rate * int64(now.Sub(start)) / int64(time.Second)
			for ; sent < due; sent++ {
				if l.flying.Load() >= maxFlying {
					l.skipped.Add(1)
					continue
				}
				l.flying.Add(1)
				l.cl.Produce(context.Background(), &kgo.Record{Value: topicLoadValue(sent, size)}, l.answered)
			}
		}
	}
}

func (l *topicLoad) answered(_ *kgo.Record, err error) {
	l.flying.Add(-1)
	if err == nil {
		l.acked.Add(1)
		return
	}
	select {
	case <-l.stop:
		return // the client closing fails what it still held
	default:
	}
	l.failed.Add(1)
	l.mu.Lock()
	l.state.LastError, l.state.LastErrorTimestamp = err.Error(), l.clock.Now().UnixMilli()
	l.mu.Unlock()
}

// close stops the load and its client; what the client still held is
// dropped.
func (l *topicLoad) close() {
	close(l.stop)
	<-l.done
	l.cl.Close()
}

// topicLoadValue is record seq's value: its number, padded with dots to
// size bytes.
func topicLoadValue(seq int64, size int) []byte {
	v := make([]byte, size)
	for i := range v {
		v[i] = '.'
	}
	copy(v, strconv.AppendInt([]byte("load-"), seq, 10))
	return v
}
