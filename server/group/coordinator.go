package group

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/internal/kafkahash"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Config is what a broker hands its coordinator.
type Config struct {
	// BrokerID is the broker's id, for the logs.
	BrokerID int32
	// Log reads and appends the offsets partitions the broker leads.
	Log Log
	// Clock is the cluster clock; nil is the wall clock.
	Clock *clock.Clock
	// Logger logs loads and unloads; nil discards.
	Logger *slog.Logger
	// Timing is the groups' timing from the broker's settings.
	Timing Timing
	// NumPartitions is the partition count of __consumer_offsets in the
	// broker's metadata, 0 while it has no such topic.
	NumPartitions func() int32
	// PartitionExists reports whether the broker's metadata has topic's
	// partition: a commit to one it lacks is UNKNOWN_TOPIC_OR_PARTITION,
	// as Kafka's KafkaApis answers.
	PartitionExists func(topic string, partition int32) bool
	// Topics is the broker's topic metadata now, for consumer groups'
	// subscriptions; nil is none.
	Topics func() Topics
}

// Coordinator is a broker's group coordinator (Kafka's
// GroupCoordinatorService): one shard per partition of __consumer_offsets
// the broker leads. Its methods are safe for concurrent use.
type Coordinator struct {
	id            int32
	log           Log
	clock         *clock.Clock
	logger        *slog.Logger
	timing        Timing
	numPartitions func() int32
	exists        func(topic string, partition int32) bool
	topicsNow     func() Topics

	mu     sync.Mutex
	shards map[int32]*shard
	closed bool
	wg     sync.WaitGroup
}

// New is a coordinator that leads no partition yet.
func New(cfg Config) *Coordinator {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Coordinator{
		id: cfg.BrokerID, log: cfg.Log, clock: cfg.Clock, logger: cfg.Logger.With("part", "group-coordinator"),
		timing: cfg.Timing, numPartitions: cfg.NumPartitions, exists: cfg.PartitionExists, topicsNow: cfg.Topics, shards: map[int32]*shard{},
	}
}

// Elect makes the coordinator serve the offsets partitions the broker
// now leads, partition to leader epoch (Kafka's onElection and
// onResignation): a partition newly led, or led in a new epoch, is loaded
// afresh; one no longer led is unloaded.
func (c *Coordinator) Elect(leading map[int32]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	for p, s := range c.shards {
		if epoch, ok := leading[p]; !ok || epoch != s.epoch {
			delete(c.shards, p)
			s.unload()
			c.logger.Info("no longer coordinating", "partition", p, "epoch", s.epoch)
		}
	}
	for p, epoch := range leading {
		if c.shards[p] != nil {
			continue
		}
		s := newShard(c, p, epoch)
		c.shards[p] = s
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer cancel()
			// A failed read is tried again from the start (each load
			// builds its state afresh), backing off; meanwhile the
			// groups answer COORDINATOR_LOAD_IN_PROGRESS.
			for backoff := loadRetryMin; ; backoff = min(2*backoff, loadRetryMax) {
				err := s.load(ctx)
				if ctx.Err() != nil {
					return
				}
				if err == nil {
					c.logger.Info("coordinating", "partition", p, "epoch", epoch)
					return
				}
				c.logger.Error("cannot load groups; trying again", "partition", p, "epoch", epoch, "in", backoff, "err", err)
				select {
				case <-ctx.Done():
					return
				case <-c.clock.After(backoff):
				}
			}
		}()
	}
}

// How long a failed load waits before it reads the partition again.
const (
	loadRetryMin = 100 * time.Millisecond
	loadRetryMax = 5 * time.Second
)

// Close unloads every shard and waits for the loads in flight.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.closed = true
	shards := c.shards
	c.shards = map[int32]*shard{}
	c.mu.Unlock()
	for _, s := range shards {
		s.unload()
	}
	c.wg.Wait()
}

// shardFor is the shard of group id, or the error a request for it gets:
// NOT_COORDINATOR when the broker does not lead its partition.
func (c *Coordinator) shardFor(id string) (*shard, int16) {
	n := c.numPartitions()
	if n <= 0 {
		return nil, kerr.NotCoordinator.Code
	}
	c.mu.Lock()
	s := c.shards[kafkahash.GroupPartition(id, n)]
	c.mu.Unlock()
	if s == nil {
		return nil, kerr.NotCoordinator.Code
	}
	return s, 0
}

// allShards are the shards, for the requests about every group.
func (c *Coordinator) allShards() []*shard {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*shard, 0, len(c.shards))
	for _, s := range c.shards {
		out = append(out, s)
	}
	return out
}

// noTopics is the metadata of a coordinator told of none.
type noTopics struct{}

func (noTopics) ByName(string) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) ByID([16]byte) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) Names() []string                 { return nil }

// topics is the broker's topic metadata now.
func (c *Coordinator) topics() Topics {
	if c.topicsNow == nil {
		return noTopics{}
	}
	return c.topicsNow()
}
