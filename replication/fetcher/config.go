package fetcher

import (
	"context"
	"log/slog"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SendFunc sends req to the broker with id to and returns its answer. It
// must return when ctx ends.
type SendFunc func(ctx context.Context, to int32, req kmsg.Request) (kmsg.Response, error)

// Kafka's defaults for the replica fetcher's settings.
const (
	DefaultNumReplicaFetchers           = 1
	DefaultReplicaFetchWaitMax          = 500 * time.Millisecond
	DefaultReplicaFetchMinBytes         = 1
	DefaultReplicaFetchMaxBytes         = 1 << 20
	DefaultReplicaFetchResponseMaxBytes = 10 << 20
	DefaultReplicaFetchBackoff          = time.Second
	DefaultReplicaSocketTimeout         = 30 * time.Second
	DefaultReplicationQuotaWindowNum    = 11
	DefaultReplicationQuotaWindowSize   = time.Second
	// DefaultFetchVersion and DefaultListOffsetsVersion are the versions
	// of a 4.x broker's fetches: MetadataVersion.fetchRequestVersion from
	// 4.1-IV1 on and listOffsetRequestVersion from 4.2-IV1 on.
	DefaultFetchVersion       int16 = 18
	DefaultListOffsetsVersion int16 = 11
)

// Config configures a Manager and its threads. Zero durations and sizes
// take Kafka's defaults.
type Config struct {
	// BrokerID is the local broker, sent as the fetch's replica id.
	BrokerID int32
	// FetchVersion and ListOffsetsVersion are the versions of the
	// fetchers' requests, which a broker takes from its
	// inter.broker.protocol.version (Kafka 3.9's are 17 and 9); 0 means
	// DefaultFetchVersion and DefaultListOffsetsVersion.
	FetchVersion, ListOffsetsVersion int16
	// BrokerEpoch returns the local broker's current epoch, sent in the
	// fetch's ReplicaState; nil sends -1.
	BrokerEpoch func() int64
	// Send carries requests to leaders.
	Send SendFunc
	// NumReplicaFetchers is num.replica.fetchers: threads per source broker.
	NumReplicaFetchers int
	// FetchWaitMax is replica.fetch.wait.max.ms: how long the leader may
	// hold a fetch that has too little data.
	FetchWaitMax time.Duration
	// FetchMinBytes is replica.fetch.min.bytes.
	FetchMinBytes int32
	// FetchMaxBytes is replica.fetch.max.bytes: the per-partition limit.
	FetchMaxBytes int32
	// FetchResponseMaxBytes is replica.fetch.response.max.bytes.
	FetchResponseMaxBytes int32
	// FetchBackoff is replica.fetch.backoff.ms: how long a partition waits
	// after an error, and a thread with nothing to fetch.
	FetchBackoff time.Duration
	// SocketTimeout is replica.socket.timeout.ms: how long one request may
	// take beyond FetchWaitMax before it fails.
	SocketTimeout time.Duration
	// Quota is the follower replication quota; nil throttles nothing.
	Quota *Quota
	// Logger receives the fetchers' log lines; nil discards them.
	Logger *slog.Logger
	// Clock is the cluster clock the fetchers' waits, backoffs and
	// request timeouts are measured on; nil is the wall clock.
	Clock *clock.Clock
}

// withDefaults fills in Kafka's defaults for what is unset.
func (c Config) withDefaults() Config {
	if c.FetchVersion <= 0 {
		c.FetchVersion = DefaultFetchVersion
	}
	if c.ListOffsetsVersion <= 0 {
		c.ListOffsetsVersion = DefaultListOffsetsVersion
	}
	if c.NumReplicaFetchers <= 0 {
		c.NumReplicaFetchers = DefaultNumReplicaFetchers
	}
	if c.FetchWaitMax <= 0 {
		c.FetchWaitMax = DefaultReplicaFetchWaitMax
	}
	if c.FetchMinBytes <= 0 {
		c.FetchMinBytes = DefaultReplicaFetchMinBytes
	}
	if c.FetchMaxBytes <= 0 {
		c.FetchMaxBytes = DefaultReplicaFetchMaxBytes
	}
	if c.FetchResponseMaxBytes <= 0 {
		c.FetchResponseMaxBytes = DefaultReplicaFetchResponseMaxBytes
	}
	if c.FetchBackoff <= 0 {
		c.FetchBackoff = DefaultReplicaFetchBackoff
	}
	if c.SocketTimeout <= 0 {
		c.SocketTimeout = DefaultReplicaSocketTimeout
	}
	if c.BrokerEpoch == nil {
		c.BrokerEpoch = func() int64 { return -1 }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
