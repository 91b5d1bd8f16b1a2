package controller

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// DefaultMaxBrokerPartitions is max.broker.partitions' default here: the
// most partition replicas one broker may host. KIP-578, which named the
// setting, left it unbounded; a broker holds two open files per replica
// (its active segment and index), and a playground runs every broker in
// one process, so three brokers at this bound hold about 6,000 files,
// under half of a common 20,000 limit.
const DefaultMaxBrokerPartitions = 1000

// replicaCounts is how many partition replicas each broker hosts, as the
// image and the request's earlier topics place them: KIP-578's partition
// capacity check on CreateTopics and CreatePartitions.
type replicaCounts struct {
	max       int
	perBroker map[int32]int
}

func newReplicaCounts(img *image.MetadataImage, max int) *replicaCounts {
	c := &replicaCounts{max: max, perBroker: map[int32]int{}}
	for _, t := range img.Topics().Topics() {
		for _, p := range t.Partitions() {
			for _, r := range p.Replicas {
				c.perBroker[r]++
			}
		}
	}
	return c
}

// admit checks that the partitions of recs fit every broker's capacity
// and, if they do, counts them. A request that does not fit is refused
// whole, POLICY_VIOLATION, as Kafka refuses one over its per-request
// limit (KIP-578's RESOURCE_LIMIT_REACHED never came to Kafka).
func (c *replicaCounts) admit(recs []record.Record) *apiError {
	add := map[int32]int{}
	for _, r := range recs {
		if p, ok := r.(*record.PartitionRecord); ok {
			for _, b := range p.Replicas {
				add[b]++
			}
		}
	}
	for b, n := range add {
		if have := c.perBroker[b]; have+n > c.max {
			return refuse(kerr.PolicyViolation, "Creating these partitions would put %d partition replicas on broker %d, which hosts %d: more than max.broker.partitions (%d).",
				n, b, have, c.max)
		}
	}
	for b, n := range add {
		c.perBroker[b] += n
	}
	return nil
}
