package quorum

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LogDirName is the folder of the metadata log inside a node's folder, as
// Kafka names a partition's directory (<topic>-<partition>).
const LogDirName = raft.MetadataTopic + "-0"

// Config configures a Node.
type Config struct {
	// Raft is the quorum configuration: NodeID, Voters, ClusterID and the
	// controller.quorum.* timings. Its Logger defaults to Logger.
	Raft raft.Config
	// BootstrapVoters, if set, is the voter set a dynamic quorum
	// (kraft.version 1) starts with: the node writes it into its log when
	// the log is empty (raft.BootstrapVoters), as Kafka's kafka-storage
	// format --standalone or --initial-controllers does. Only the initial
	// controllers have it; a controller that joins later starts as an
	// observer with Raft.Bootstrap naming whom to ask.
	BootstrapVoters raft.VoterSet
	// DirectoryID, if set, reads the directory id of the node's folder
	// (its meta.properties) at each start, for Raft.DirectoryID: a folder
	// formatted again, as a replaced disk is, has a new one, and the node
	// is then no longer the voter its old one was. Nor does it write
	// BootstrapVoters when they name it with another directory id: the
	// new folder was formatted as Kafka formats a controller that joins
	// (kafka-storage format --no-initial-controllers).
	DirectoryID func() (raft.DirectoryID, error)
	// ObserverOnly marks a node that never votes, whatever a dynamic
	// quorum's voter set says: a broker. Every other node of a dynamic
	// quorum serves the voters' RPCs from its start, since an
	// AddRaftVoter may make it a voter while it runs.
	ObserverOnly bool
	// Dir is the node's folder; the log lives in Dir/__cluster_metadata-0.
	Dir string
	// Peers returns the listener address of another node; the node asks
	// for a voter's address the first time it sends to it.
	Peers func(id int32) (string, bool)
	// Flush is storage.FlushAlways (fsync before the log end counts: what a
	// follower acknowledges and what the leader counts toward the high
	// watermark is on disk) or storage.FlushNever (the page cache keeps
	// what a Kill, a crash of the node inside the process, cannot lose).
	Flush storage.FlushPolicy
	// SegmentBytes is metadata.log.segment.bytes; 0 means storage's
	// default (1 GiB).
	SegmentBytes int
	// Disk carries the writes and fsyncs of the node's log, snapshots and
	// quorum-state file; nil means the operating system's (storage.OS).
	// Tests give a disk that fills up (storage/disktest).
	Disk storage.Disk
	// Links, if set, carry the node's requests to its peers and their
	// responses, with the faults the playground sets.
	Links *wire.Links
	// Counters, if set, count the node's traffic.
	Counters *wire.Counters
	// Secret is the playground's member secret: the node's clients
	// authenticate with it (wire.MemberMechanism) before their first
	// request to a peer, as Kafka's raft client authenticates on the
	// CONTROLLER listener. Empty sends no SASL. The node's server, which
	// refuses the quorum's RPCs to strangers (VoterAPIs are MembersOnly),
	// needs the same secret in its wire.ServerConfig.
	Secret string
	// SnapshotMaxNewBytes is metadata.log.max.record.bytes.between.snapshots:
	// the node snapshots its listener's state once this many bytes of records were
	// committed since its last snapshot; 0 never does.
	SnapshotMaxNewBytes int64
	// SnapshotMaxInterval is metadata.log.max.snapshot.interval.ms: the
	// node snapshots at least this often when something was committed; 0
	// never does.
	SnapshotMaxInterval time.Duration
	// ShutdownTimeout bounds a graceful Stop: how long a resigning leader
	// waits for a successor. 0 means 5 s, as Kafka's controller waits.
	ShutdownTimeout time.Duration
	// NewListener makes the state machine each incarnation of the node
	// feeds; it is required. Every start replays the log (from its latest
	// snapshot) into a fresh one.
	NewListener func() Listener
	// OnEvent receives the node's events, from the node's goroutine: it
	// must not block or call back into the Node.
	OnEvent func(Event)
	// Logger receives the node's log; nil discards it.
	Logger *slog.Logger
	// Clock is the cluster clock raft's timeouts, the node's requests and
	// its snapshots' age are measured on; nil is the wall clock.
	Clock *clock.Clock
}

func (c *Config) validate() error {
	switch {
	case c.Dir == "":
		return errors.New("quorum: the node needs a folder (Dir)")
	case c.NewListener == nil:
		return errors.New("quorum: the node needs NewListener to make the state machine it feeds")
	case c.Peers == nil:
		return errors.New("quorum: the node needs Peers to find the voters")
	case c.Flush != storage.FlushAlways && c.Flush != storage.FlushNever:
		return fmt.Errorf("quorum: flush policy %v: want always or never", c.Flush)
	case c.SnapshotMaxNewBytes < 0 || c.SnapshotMaxInterval < 0 || c.ShutdownTimeout < 0:
		return errors.New("quorum: negative interval, size or timeout")
	}
	return nil
}

// indexIntervalBytes is the metadata log's index.interval.bytes. Its reads
// are at the tail (a follower's fetch offset, the next committed batch) and
// find their batch by reading headers one by one from the closest index
// entry; with Kafka's 4096 and the small batches of the metadata log that
// scan dominated the CPU profile of a commit, so the index is denser.
const indexIntervalBytes = 256

// storageOptions maps the flush policy onto the log's. Under FlushAlways
// the node itself decides when to fsync (raft's NeedsFlush), so appends
// must not: storage's interval policy with an interval no run reaches does
// exactly that, while Flush still fsyncs.
func (c *Config) storageOptions() storage.Options {
	o := storage.Options{SegmentBytes: c.SegmentBytes, FlushPolicy: storage.FlushNever, IndexIntervalBytes: indexIntervalBytes, Disk: c.Disk}
	if c.Flush == storage.FlushAlways {
		o.FlushPolicy = storage.FlushInterval
		o.FlushInterval = 1<<63 - 1
	}
	return o
}

// Lowest versions served. Fetch needs v12 for the fields raft checks
// (ClusterId, LastFetchedEpoch); the other RPCs work from v0.
const minFetchVersion int16 = 12

// VoterAPIs are the Kafka APIs and versions a voter serves: the quorum's
// RPCs from their first usable version up to the version raft speaks.
// Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot are for
// members only, as Kafka's ControllerApis authorizes CLUSTER_ACTION on the
// cluster for them; DescribeQuorum is open to anyone (Kafka authorizes
// DESCRIBE, which kraftlab grants to anonymous users' tools).
// AddRaftVoter and RemoveRaftVoter change a dynamic quorum's voters; Kafka
// authorizes ALTER on the cluster for them, which kraftlab grants to
// anyone, as its playground's tools are. UpdateRaftVoter, which a voter
// sends its leader, is for members. UpdateFeatures upgrades kraft.version.
var VoterAPIs = []wire.APIRange{
	{Key: kmsg.Fetch.Int16(), MinVersion: minFetchVersion, MaxVersion: raft.FetchVersion, MembersOnly: true},
	voteAPI,
	{Key: kmsg.BeginQuorumEpoch.Int16(), MinVersion: 0, MaxVersion: raft.BeginQuorumEpochVersion, MembersOnly: true},
	endQuorumEpochAPI,
	describeQuorumAPI,
	{Key: kmsg.FetchSnapshot.Int16(), MinVersion: 0, MaxVersion: raft.FetchSnapshotVersion, MembersOnly: true},
	addRaftVoterAPI,
	removeRaftVoterAPI,
	updateRaftVoterAPI,
	updateFeaturesAPI,
}

// The RPCs voters serve in both replication modes: elections and
// DescribeQuorum.
var (
	voteAPI           = wire.APIRange{Key: kmsg.Vote.Int16(), MinVersion: 0, MaxVersion: raft.VoteVersion, MembersOnly: true}
	endQuorumEpochAPI = wire.APIRange{Key: kmsg.EndQuorumEpoch.Int16(), MinVersion: 0, MaxVersion: raft.EndQuorumEpochVersion, MembersOnly: true}
	describeQuorumAPI = wire.APIRange{Key: kmsg.DescribeQuorum.Int16(), MinVersion: 0, MaxVersion: raft.DescribeQuorumVersion}
)

// PushReplicaAPIs are the push replication RPCs every replica serves, an
// observer as well as a voter, since the leader pushes to both (package
// pushrpc's private keys, members only as Kafka's quorum RPCs are).
var PushReplicaAPIs = []wire.APIRange{
	{Key: pushrpc.AppendEntriesKey, MaxVersion: pushrpc.Version, MembersOnly: true},
	{Key: pushrpc.InstallSnapshotKey, MaxVersion: pushrpc.Version, MembersOnly: true},
}

// PushVoterAPIs are what a voter serves under push replication: the push
// RPCs, ObserveQuorum (an observer asks a voter for the leader), and the
// elections and DescribeQuorum of VoterAPIs; no Fetch, FetchSnapshot or
// BeginQuorumEpoch.
var PushVoterAPIs = append(slices.Clone(PushReplicaAPIs),
	wire.APIRange{Key: pushrpc.ObserveQuorumKey, MaxVersion: pushrpc.Version, MembersOnly: true},
	voteAPI, endQuorumEpochAPI, describeQuorumAPI)

// servedAPIs are the RPCs a node serves: a voter's by replication mode; a
// pull observer serves none (it only fetches), a push observer what the
// leader pushes.
func servedAPIs(mode raft.Replication, voter bool) []wire.APIRange {
	switch {
	case mode == raft.Push && voter:
		return PushVoterAPIs
	case mode == raft.Push:
		return PushReplicaAPIs
	case voter:
		return VoterAPIs
	}
	return nil
}
