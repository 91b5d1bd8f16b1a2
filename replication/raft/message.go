package raft

import (
	"fmt"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Message is one request or response between a node and its peers (or, for
// DescribeQuorum, a client). Exactly one of Request, Response and Err is set.
//
// Inbound requests carry an ID chosen by the driver; the node answers each,
// possibly later (a parked Fetch), with a Message carrying the same ID.
// Outbound requests carry an ID chosen by the node; the driver delivers the
// matching response, or an Err when the request failed (timeout, unreachable
// peer), with that ID. A client (DescribeQuorum) needs a From that is no
// node's id; the answer goes To it.
type Message struct {
	From, To int32
	ID       uint64
	Request  kmsg.Request
	Response kmsg.Response
	// Err, on the response side, says the request failed without an answer.
	Err error
}

// String describes the message for logs: sender, receiver, ID and API.
func (m Message) String() string {
	switch {
	case m.Request != nil:
		return fmt.Sprintf("%d->%d #%d %s request", m.From, m.To, m.ID, pushrpc.NameForKey(m.Request.Key()))
	case m.Response != nil:
		return fmt.Sprintf("%d->%d #%d %s response", m.From, m.To, m.ID, pushrpc.NameForKey(m.Response.Key()))
	default:
		return fmt.Sprintf("%d->%d #%d failed: %v", m.From, m.To, m.ID, m.Err)
	}
}

// The API versions the node sends, those of an Apache Kafka 4.1+
// controller; the network layer advertises them in ApiVersions. The node
// answers a request at the version it was asked in.
//
//   - Fetch 18: topic IDs (v13), ReplicaState (v15), ReplicaDirectoryId (v17),
//     the fetcher's HighWatermark (v18, KIP-1166).
//   - FetchSnapshot 1, Vote 2 (PreVote, KIP-996), BeginQuorumEpoch 1 and
//     EndQuorumEpoch 1 (flexible, KIP-853 fields left at their defaults),
//     DescribeQuorum 2 (timestamps of KIP-836).
const (
	FetchVersion            int16 = 18
	FetchSnapshotVersion    int16 = 1
	VoteVersion             int16 = 2
	BeginQuorumEpochVersion int16 = 1
	EndQuorumEpochVersion   int16 = 1
	DescribeQuorumVersion   int16 = 2
)

// MetadataTopic is the name of the quorum's single-partition log.
const MetadataTopic = "__cluster_metadata"

// MetadataTopicID is Kafka's Uuid.METADATA_TOPIC_ID, new Uuid(0L, 1L).
var MetadataTopicID = [16]byte{15: 1}

// Kafka error codes the quorum uses (org.apache.kafka.common.protocol.Errors).
const (
	errNone                    int16 = 0
	errUnknownServerError      int16 = -1
	errUnknownTopicOrPartition int16 = 3
	errNotLeaderOrFollower     int16 = 6
	errBrokerNotAvailable      int16 = 8
	errInvalidRequest          int16 = 42
	errFencedLeaderEpoch       int16 = 74
	errUnknownLeaderEpoch      int16 = 75
	errInconsistentVoterSet    int16 = 94
	errSnapshotNotFound        int16 = 98
	errPositionOutOfRange      int16 = 99
	errInconsistentClusterID   int16 = 104
	errInvalidVoterKey         int16 = 116
)

var errorNames = map[int16]string{
	errNone:                    "NONE",
	errUnknownServerError:      "UNKNOWN_SERVER_ERROR",
	errUnknownTopicOrPartition: "UNKNOWN_TOPIC_OR_PARTITION",
	errNotLeaderOrFollower:     "NOT_LEADER_OR_FOLLOWER",
	errBrokerNotAvailable:      "BROKER_NOT_AVAILABLE",
	errInvalidVoterKey:         "INVALID_VOTER_KEY",
	errInvalidRequest:          "INVALID_REQUEST",
	errFencedLeaderEpoch:       "FENCED_LEADER_EPOCH",
	errUnknownLeaderEpoch:      "UNKNOWN_LEADER_EPOCH",
	errInconsistentVoterSet:    "INCONSISTENT_VOTER_SET",
	errSnapshotNotFound:        "SNAPSHOT_NOT_FOUND",
	errPositionOutOfRange:      "POSITION_OUT_OF_RANGE",
	errInconsistentClusterID:   "INCONSISTENT_CLUSTER_ID",
}

// ErrorName returns Kafka's name for an error code.
func ErrorName(code int16) string {
	if s, ok := errorNames[code]; ok {
		return s
	}
	return fmt.Sprintf("error %d", code)
}
