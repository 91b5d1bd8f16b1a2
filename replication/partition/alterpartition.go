package partition

import "github.com/twmb/franz-go/pkg/kmsg"

// AlterPartition is the proposal as one partition of an AlterPartition
// request (v3: each member with its broker epoch, KIP-903), for partition
// index, sent by leader whose own broker epoch is leaderEpoch, so that the
// controller refuses a member whose incarnation is gone.
func (prop Proposal) AlterPartition(index, leader int32, leaderEpoch int64) kmsg.AlterPartitionRequestTopicPartition {
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = index, prop.LeaderEpoch, prop.PartitionEpoch
	for i, b := range prop.ISR {
		m := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		m.BrokerID, m.BrokerEpoch = b, -1
		if b == leader {
			m.BrokerEpoch = leaderEpoch
		} else if i < len(prop.BrokerEpochs) {
			m.BrokerEpoch = prop.BrokerEpochs[i]
		}
		rp.NewEpochISR = append(rp.NewEpochISR, m)
	}
	return rp
}
