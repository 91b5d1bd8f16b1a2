package raft

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Config configures one node of the quorum. The durations carry Kafka's
// config names (controller.quorum.*) and DefaultConfig fills in Kafka's
// defaults.
type Config struct {
	// NodeID is this node's id (Kafka's node.id). A node whose id is not in
	// Voters is an observer: it fetches the log but never votes.
	NodeID int32
	// Voters is the static voter set (controller.quorum.voters, kraft.version 0).
	// A dynamic quorum (kraft.version 1) leaves it empty: its voter set is
	// the latest VotersRecord in the log (see BootstrapVoters), and a
	// VotersRecord overrides Voters as it does in Kafka.
	Voters []int32
	// DirectoryID is the id of this node's metadata log directory. A
	// dynamic quorum names each voter by id and directory id, so a node
	// that lost its disk (a new directory id) is no longer the voter its
	// id was.
	DirectoryID DirectoryID
	// Bootstrap lists the nodes a dynamic quorum's replica fetches from to
	// find the leader (controller.quorum.bootstrap.servers, by node id: the
	// network layer maps ids to addresses), beside the voters it knows of.
	// A node with no voter set yet, one joining a running quorum, needs it.
	Bootstrap []int32
	// Listeners are this node's own listeners, the first its default, as
	// a voter set names it (Kafka's listeners for controller.listener.names):
	// a voter of a dynamic quorum whose entry differs sends them with
	// UpdateRaftVoter (see Node.SetListeners). Empty, the node describes
	// itself to no one.
	Listeners []Endpoint
	// ClusterID is checked on every RPC that carries one; a mismatch is
	// answered with INCONSISTENT_CLUSTER_ID.
	ClusterID string

	// ElectionTimeout is controller.quorum.election.timeout.ms: an unattached
	// voter starts an election after a random time in [T, 2T).
	ElectionTimeout time.Duration
	// ElectionBackoffMax is controller.quorum.election.backoff.max.ms, the cap
	// of the backoff after a lost election.
	ElectionBackoffMax time.Duration
	// FetchTimeout is controller.quorum.fetch.timeout.ms: a follower that has
	// not fetched successfully for this long starts an election, and a leader
	// that has not been fetched from by a majority for 1.5 times this long
	// resigns (check-quorum).
	FetchTimeout time.Duration
	// RequestTimeout is controller.quorum.request.timeout.ms.
	RequestTimeout time.Duration
	// RetryBackoff is controller.quorum.retry.backoff.ms, the pause before
	// resending to a destination whose last request failed.
	RetryBackoff time.Duration
	// AppendLinger is controller.quorum.append.linger.ms: how long the leader
	// accumulates appended records before writing them as one batch (past
	// it, the leader goes on gathering until a fetch can take them, at
	// most 2 ms more).
	AppendLinger time.Duration
	// FetchMaxWait is how long the leader parks a Fetch that finds nothing new
	// (KafkaRaftClient.MAX_FETCH_WAIT_MS, 500 ms; not a user config in Kafka).
	FetchMaxWait time.Duration
	// FetchMaxBytes caps the bytes of one Fetch or FetchSnapshot response and
	// of one leader batch (MAX_FETCH_SIZE_BYTES and MAX_BATCH_SIZE_BYTES, 8 MiB).
	FetchMaxBytes int32

	// Replication is how records reach the other replicas: Pull, Kafka's
	// (the zero value), or Push, classic Raft's. Elections are the same in
	// both.
	Replication Replication
	// HeartbeatInterval (push only) is how long the leader lets a replica
	// go without an AppendEntries before it sends an empty one. Its
	// default is FetchMaxWait's, so that an idle push follower hears from
	// its leader as often as an idle pull follower's parked Fetch returns.
	HeartbeatInterval time.Duration
	// MaxInflight (push only) is how many AppendEntries carrying records
	// the leader keeps in flight to one replica (etcd's MaxInflightMsgs):
	// the push side's flow control, where a pull follower has one Fetch
	// in flight.
	MaxInflight int
	// AppendMaxBytes (push only) caps the records of one AppendEntries
	// and the bytes of one InstallSnapshot chunk (etcd's MaxSizePerMsg; 0
	// takes FetchMaxBytes). A push is a request,
	// read by the replica's listener up to its frame limit (a
	// controller's kraftlab.controller.socket.request.max.bytes, 1 MiB):
	// a bigger one is refused by closing the connection, and a replica
	// far enough behind would never be sent anything it takes. A pull
	// follower's Fetch response is read by its own client instead, which
	// takes FetchMaxBytes.
	AppendMaxBytes int32

	// Logger receives the node's transitions and errors; nil discards them.
	Logger *slog.Logger
}

// Replication is how the leader's records reach the other replicas.
type Replication int8

// The replication modes.
const (
	// Pull is Kafka's (KIP-595): followers and observers fetch, and a
	// fetch acknowledges what came before it.
	Pull Replication = iota
	// Push is classic Raft's (the Raft paper, etcd/raft): the leader sends
	// AppendEntries to each replica, which answers it.
	Push
)

func (r Replication) String() string {
	switch r {
	case Pull:
		return "pull"
	case Push:
		return "push"
	}
	return fmt.Sprintf("Replication(%d)", r)
}

// ParseReplication reads "pull" or "push".
func ParseReplication(s string) (Replication, error) {
	switch s {
	case "pull":
		return Pull, nil
	case "push":
		return Push, nil
	}
	return Pull, fmt.Errorf("replication %q: want pull or push", s)
}

// DefaultConfig returns a Config with Apache Kafka's defaults for the quorum
// settings; the caller fills in NodeID, Voters and ClusterID.
func DefaultConfig() Config {
	return Config{
		ElectionTimeout:    1000 * time.Millisecond,
		ElectionBackoffMax: 1000 * time.Millisecond,
		FetchTimeout:       2000 * time.Millisecond,
		RequestTimeout:     2000 * time.Millisecond,
		RetryBackoff:       20 * time.Millisecond,
		AppendLinger:       25 * time.Millisecond,
		FetchMaxWait:       500 * time.Millisecond,
		FetchMaxBytes:      8 << 20,
		HeartbeatInterval:  500 * time.Millisecond,
		MaxInflight:        256,
		AppendMaxBytes:     512 << 10,
	}
}

func (c *Config) validate() error {
	if c.NodeID < 0 {
		return fmt.Errorf("node id %d: must not be negative", c.NodeID)
	}
	if len(c.Voters) == 0 && len(c.Bootstrap) == 0 {
		// A dynamic quorum may have no static voters, but then it must
		// either find its voters in the log or be told whom to ask.
		return errors.New("no voters and no bootstrap servers configured")
	}
	seen := make(map[int32]bool, len(c.Voters))
	for _, v := range c.Voters {
		if v < 0 {
			return fmt.Errorf("voter id %d: must not be negative", v)
		}
		if seen[v] {
			return fmt.Errorf("voter %d listed twice", v)
		}
		seen[v] = true
	}
	for _, id := range c.Bootstrap {
		if id < 0 {
			return fmt.Errorf("bootstrap server id %d: must not be negative", id)
		}
	}
	if c.ClusterID == "" {
		return errors.New("cluster id is empty")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"controller.quorum.election.timeout.ms", c.ElectionTimeout},
		{"controller.quorum.fetch.timeout.ms", c.FetchTimeout},
		{"controller.quorum.request.timeout.ms", c.RequestTimeout},
		{"fetch max wait", c.FetchMaxWait},
	} {
		if d.v < time.Millisecond {
			return fmt.Errorf("%s is %v: must be at least 1ms", d.name, d.v)
		}
	}
	if c.ElectionBackoffMax < 0 || c.RetryBackoff < 0 || c.AppendLinger < 0 {
		return errors.New("controller.quorum.election.backoff.max.ms, retry.backoff.ms and append.linger.ms must not be negative")
	}
	switch c.Replication {
	case Pull:
	case Push:
		if c.HeartbeatInterval < time.Millisecond || c.HeartbeatInterval >= c.FetchTimeout {
			return fmt.Errorf("heartbeat interval %v: must be at least 1ms and below controller.quorum.fetch.timeout.ms (%v)", c.HeartbeatInterval, c.FetchTimeout)
		}
		if c.MaxInflight < 1 {
			return fmt.Errorf("max in-flight AppendEntries %d: must be at least 1", c.MaxInflight)
		}
	default:
		return fmt.Errorf("replication %v: want pull or push", c.Replication)
	}
	if c.FetchMaxBytes < 1024 {
		return fmt.Errorf("fetch max bytes %d: must be at least 1024", c.FetchMaxBytes)
	}
	return nil
}
