package partition

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// Kafka's defaults for the settings a Partition takes.
const (
	// DefaultMinInsyncReplicas is min.insync.replicas' default.
	DefaultMinInsyncReplicas = 1
	// DefaultReplicaLagTimeMax is replica.lag.time.max.ms' default.
	DefaultReplicaLagTimeMax = 30 * time.Second
)

// Config describes one replica of a partition.
type Config struct {
	// Topic is the topic's name; with Partition it names the replica's
	// directory, <Topic>-<Partition>, as Kafka names it.
	Topic string
	// TopicID is the topic's id, kept in the directory's partition.metadata.
	TopicID [16]byte
	// Partition is the partition's index.
	Partition int32
	// Dir is the log directory (an entry of log.dirs) the replica's own
	// directory lives in.
	Dir string
	// LocalBrokerID is the broker this replica is on.
	LocalBrokerID int32
	// Log configures the replica's storage.Log (segment.bytes,
	// index.interval.bytes, the flush policy). Its Now defaults to Now.
	Log storage.Options
	// MinInsyncReplicas is min.insync.replicas: the smallest ISR an acks=-1
	// produce is accepted with. Zero means DefaultMinInsyncReplicas.
	MinInsyncReplicas int
	// ReplicaLagTimeMax is replica.lag.time.max.ms: how long a follower may
	// go without catching up to the leader's log end offset before it
	// leaves the ISR. Zero means DefaultReplicaLagTimeMax.
	ReplicaLagTimeMax time.Duration
	// MaxMessageBytes is message.max.bytes: the largest batch a producer
	// may append (MESSAGE_TOO_LARGE). Zero means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// HighWatermark is the high watermark the caller checkpointed for this
	// replica (Kafka's replication-offset-checkpoint), or 0. It is bounded
	// by the recovered log.
	HighWatermark int64
	// RecoveryPoint is the log's flushed end as the caller last
	// checkpointed it (Kafka's recovery-point-offset-checkpoint), or 0: a
	// log that opens shorter lost records it had made durable, which no
	// crash explains (see Damage).
	RecoveryPoint int64
	// ReplicaEligible says whether a broker may join the ISR (Kafka's
	// isReplicaIsrEligible: registered, unfenced, not shutting down).
	// Nil means every replica is.
	ReplicaEligible func(brokerID int32) bool
	// AliveBrokerEpoch is the broker epoch of a registered, unfenced
	// broker as this broker's metadata holds it (Kafka's
	// getAliveBrokerEpoch), ok false for any other. A follower's fetch
	// naming an older epoch comes from a stale incarnation and is refused,
	// and a follower may join the ISR only if its fetches named the epoch
	// the metadata holds, or none (KIP-903). Nil means no epoch is known:
	// no fetch is refused for it and no expansion held back.
	AliveBrokerEpoch func(brokerID int32) (epoch int64, ok bool)
	// Now is the clock the log's flush interval is measured with. Default
	// time.Now.
	Now func() time.Time
}

// maxTopicLength is Kafka's limit on a topic name (Topic.MAX_NAME_LENGTH).
const maxTopicLength = 249

func (c *Config) validate() error {
	if err := validTopic(c.Topic); err != nil {
		return err
	}
	if c.Partition < 0 {
		return fmt.Errorf("partition %d is negative", c.Partition)
	}
	if c.Dir == "" {
		return errors.New("no log directory")
	}
	if c.MinInsyncReplicas < 0 {
		return fmt.Errorf("min.insync.replicas %d is negative", c.MinInsyncReplicas)
	}
	if c.ReplicaLagTimeMax < 0 {
		return fmt.Errorf("replica.lag.time.max.ms %v is negative", c.ReplicaLagTimeMax)
	}
	if c.RecoveryPoint < 0 {
		return fmt.Errorf("recovery point %d is negative", c.RecoveryPoint)
	}
	if c.MaxMessageBytes < 0 {
		return fmt.Errorf("message.max.bytes %d is negative", c.MaxMessageBytes)
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MinInsyncReplicas == 0 {
		c.MinInsyncReplicas = DefaultMinInsyncReplicas
	}
	if c.ReplicaLagTimeMax == 0 {
		c.ReplicaLagTimeMax = DefaultReplicaLagTimeMax
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log.Now == nil {
		c.Log.Now = c.Now
	}
	return nil
}

// validTopic applies Kafka's rule for topic names (Topic.validate), which
// also keeps the directory name inside Dir.
func validTopic(t string) error {
	if t == "" || t == "." || t == ".." {
		return fmt.Errorf("topic name %q is not allowed", t)
	}
	if len(t) > maxTopicLength {
		return fmt.Errorf("topic name of %d characters is longer than %d", len(t), maxTopicLength)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic name %q has %q: only ASCII letters, digits, '.', '_' and '-' are allowed", t, r)
		}
	}
	return nil
}
