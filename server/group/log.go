package group

import "github.com/kraftlab/kraftlab/storage"

// Log is the broker's access to the partitions of __consumer_offsets
// that it leads (its ReplicaManager's).
type Log interface {
	// Append appends records as one batch to partition p as its leader,
	// with acks=all. done gets the batch's base offset and 0 once the
	// batch is committed, or the produce error code; it may run on any
	// goroutine, also before Append returns.
	Append(p int32, records []storage.Record, done func(base int64, code int16))
	// Read returns whole batches of partition p from offset on, below
	// its high watermark (none once offset reaches it).
	Read(p int32, offset int64) ([]byte, error)
	// Bounds are partition p's log start offset, high watermark and log
	// end offset.
	Bounds(p int32) (logStart, highWatermark, logEnd int64, err error)
}
