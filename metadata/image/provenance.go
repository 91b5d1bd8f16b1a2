package image

import "fmt"

// MetadataProvenance says where an image comes from: the offset and leader
// epoch of the last record it holds, and that record's append time.
// IsOffsetBatchAligned says the offset is the last of its batch (an image
// published between batches), as Kafka's loader records it.
type MetadataProvenance struct {
	LastContainedOffset    int64
	LastContainedEpoch     int32
	LastContainedLogTimeMs int64
	IsOffsetBatchAligned   bool
}

// EmptyProvenance is the provenance of the empty image.
var EmptyProvenance = MetadataProvenance{LastContainedOffset: -1, LastContainedEpoch: -1, LastContainedLogTimeMs: -1}

// String prints the provenance as Kafka's toString does, roughly.
func (p MetadataProvenance) String() string {
	return fmt.Sprintf("MetadataProvenance(offset=%d, epoch=%d, logTimeMs=%d, batchAligned=%v)",
		p.LastContainedOffset, p.LastContainedEpoch, p.LastContainedLogTimeMs, p.IsOffsetBatchAligned)
}
