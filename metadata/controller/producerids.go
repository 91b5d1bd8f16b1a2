package controller

import (
	"math"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProducerIDBlockSize is how many producer ids one AllocateProducerIds
// hands a broker (Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
const ProducerIDBlockSize = 1000

// allocateProducerIds is Kafka's ProducerIdControlManager.generateNextProducerID:
// the broker must hold its current epoch; it gets the block that starts at
// the working image's next producer id (0 before any), and the
// ProducerIdsRecord that moves the next id past it is written before the
// answer, so no two brokers, nor two controllers in turn, hand out one id
// twice.
func (c *QuorumController) allocateProducerIds(r *kmsg.AllocateProducerIDsRequest) outcome {
	resp := kmsg.NewPtrAllocateProducerIDsResponse()
	b := c.st.working.Cluster().Broker(r.BrokerID)
	if b == nil || b.Epoch != r.BrokerEpoch {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return outcome{resp: resp}
	}
	first := max(c.st.working.ProducerIds().NextProducerID(), 0)
	if first > math.MaxInt64-ProducerIDBlockSize {
		// Kafka throws UnknownServerException: every id is spent.
		resp.ErrorCode = kerr.UnknownServerError.Code
		return outcome{resp: resp}
	}
	resp.ProducerIDStart, resp.ProducerIDLen = first, ProducerIDBlockSize
	rec := &record.ProducerIdsRecord{BrokerID: r.BrokerID, BrokerEpoch: r.BrokerEpoch, NextProducerID: first + ProducerIDBlockSize}
	return outcome{records: []record.Record{rec}, resp: resp}
}
