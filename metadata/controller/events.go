package controller

import (
	"time"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// EventKind is what happened to the controller or the cluster it manages.
type EventKind int

// The events a controller reports. Cluster changes are reported once their
// records commit.
const (
	// EventActivated: the controller leads Epoch and its activation
	// records (if any) committed; Took is the time since it learnt it
	// leads.
	EventActivated EventKind = iota + 1
	// EventDeactivated: the controller stopped being active (another
	// leader, or an append failed); Reason says which.
	EventDeactivated
	// EventBrokerRegistered: Broker registered at BrokerEpoch (fenced).
	EventBrokerRegistered
	// EventBrokerUnfenced: Broker was unfenced: its heartbeat reported a
	// metadata offset (MetadataOffset) at or past its own registration
	// record's (RegistrationOffset), Kafka's only condition
	// (BrokerHeartbeatManager.calculateNextBrokerState).
	EventBrokerUnfenced
	// EventBrokerFenced: Broker was fenced at its own request (WantFence).
	EventBrokerFenced
	// EventBrokerSessionTimedOut: Broker's session expired and it was
	// fenced.
	EventBrokerSessionTimedOut
	// EventBrokerControlledShutdown: Broker began a controlled shutdown.
	EventBrokerControlledShutdown
	// EventTopicCreated: Topic (TopicID) was created with Partitions
	// partitions.
	EventTopicCreated
	// EventTopicDeleted: Topic (TopicID) was deleted.
	EventTopicDeleted
	// EventPartitionsCreated: Topic grew to Partitions partitions.
	EventPartitionsCreated
	// EventPartitionChanged: the leader or ISR of Topic-Partition changed;
	// Leader is the new leader and Reason says why.
	EventPartitionChanged
	// EventUncleanLeaderElection: no member of Topic-Partition's ISR
	// (LastIsr) was alive and the topic allows unclean.leader.election.enable,
	// so Leader, a replica outside the ISR, was elected and made the ISR
	// alone (Isr), in LeaderRecoveryState RECOVERING: what only LastIsr
	// held may be lost.
	EventUncleanLeaderElection
	// EventRecoveryElection: every member of Topic-Partition's ISR
	// (LastIsr) lost records to damaged files, so the controller asked the
	// other replicas for their logs and elected Leader, the newest and
	// longest, alone in the ISR and RECOVERING; Reason lists the logs.
	EventRecoveryElection
	// EventRecoveryWaiting: such a partition stays leaderless until the
	// replicas Reason names, which may hold the lost records, are alive.
	EventRecoveryWaiting
)

var eventKindNames = map[EventKind]string{
	EventActivated:                "activated",
	EventDeactivated:              "deactivated",
	EventBrokerRegistered:         "broker-registered",
	EventBrokerUnfenced:           "broker-unfenced",
	EventBrokerFenced:             "broker-fenced",
	EventBrokerSessionTimedOut:    "broker-session-timed-out",
	EventBrokerControlledShutdown: "broker-controlled-shutdown",
	EventTopicCreated:             "topic-created",
	EventTopicDeleted:             "topic-deleted",
	EventPartitionsCreated:        "partitions-created",
	EventPartitionChanged:         "partition-changed",
	EventUncleanLeaderElection:    "unclean-leader-election",
	EventRecoveryElection:         "recovery-election",
	EventRecoveryWaiting:          "recovery-waiting",
}

// String is the kind's name, e.g. "broker-unfenced".
func (k EventKind) String() string {
	if s, ok := eventKindNames[k]; ok {
		return s
	}
	return "unknown"
}

// Event is one thing the controller did; fields that do not apply to its
// Kind are zero.
type Event struct {
	Kind EventKind
	// Time is the controller's clock when it reported the event.
	Time time.Time
	// Epoch is the controller's epoch (the metadata quorum's leader epoch).
	Epoch int32
	// Took is how long activation took (EventActivated).
	Took        time.Duration
	Broker      int32
	BrokerEpoch int64
	Topic       string
	TopicID     record.Uuid
	Partition   int32
	Partitions  int32
	Leader      int32
	Isr         []int32
	// LastIsr is the ISR before an unclean election.
	LastIsr []int32
	// Elr and LastKnownElr are the partition's eligible leader replicas
	// and last known leader after the change (EventPartitionChanged);
	// FromElr says its new leader came from the ELR.
	Elr, LastKnownElr []int32
	FromElr           bool
	// MetadataOffset is the metadata offset the broker's heartbeat
	// reported, and RegistrationOffset the offset of its registration
	// record, which that offset had to reach (EventBrokerUnfenced).
	MetadataOffset, RegistrationOffset int64
	Reason                             string
}
