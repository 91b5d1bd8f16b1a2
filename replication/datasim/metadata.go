package datasim

import (
	"slices"

	"github.com/kraftlab/kraftlab/replication/partition"
)

// Controller is the control plane the data plane answers to: Run's
// modelled one, or the real QuorumController of the whole-cluster
// simulation.
type Controller interface {
	// Partition is partition idx as the controller last decided it.
	Partition(idx int32) Registration
	// AlterPartition sends a leader's ISR proposal for partition idx;
	// answer runs once with the ISR and partition epoch decided, or the
	// refusal, unless the request or its answer is lost.
	AlterPartition(from, idx int32, prop partition.Proposal, answer func(isr []int32, partitionEpoch int32, err error))
}

// Registration is one partition as the controller holds it (Kafka's
// PartitionRegistration), as far as the data plane needs it.
type Registration struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
}

func (r Registration) clone() Registration {
	r.Replicas, r.ISR = slices.Clone(r.Replicas), slices.Clone(r.ISR)
	return r
}

// Metadata is what a broker learns of the controller's decisions: the
// partitions' registrations and the brokers' epochs and fencing, at a
// version (a metadata offset) that only grows.
type Metadata struct {
	Version      int64
	Partitions   []Registration
	BrokerEpochs map[int32]int64
	// Fenced brokers (fenced or in a controlled shutdown) are not
	// eligible to join an ISR.
	Fenced map[int32]bool
}
