package server

import (
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
)

// ReplicaEventKind says what a ReplicaEvent reports.
type ReplicaEventKind int8

// The replica events.
const (
	// ReplicaDamaged: opening a replica found records gone from its files.
	ReplicaDamaged ReplicaEventKind = iota + 1
	// ReplicaRepaired: a damaged replica fetched back what it lost, or
	// leads because the controller found no intact replica; its directory
	// is online again.
	ReplicaRepaired
	// ReplicaTruncated: a follower's fetcher cut its log back to where it
	// agrees with its leader's (Kafka's fetcher logs "Truncating partition
	// ..." at info, AbstractFetcherThread).
	ReplicaTruncated
)

// ReplicaEvent is news of one of the broker's replicas.
type ReplicaEvent struct {
	Kind      ReplicaEventKind
	At        time.Time
	Topic     string
	Partition int32
	// Damage is what the replica lost.
	Damage partition.Damage
	// Leader is the broker a repaired or truncated replica fetched from,
	// or this broker when it leads.
	Leader int32
	// LogEndOffset is the replica's log end when the event happened.
	LogEndOffset int64
	// TruncatedFrom is where a truncated replica's log ended before.
	TruncatedFrom int64
}

func (rm *ReplicaManager) emit(ev ReplicaEvent) {
	if rm.onEvent != nil {
		ev.At = rm.clock.Now()
		rm.onEvent(ev)
	}
}
