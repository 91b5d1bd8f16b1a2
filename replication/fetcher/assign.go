package fetcher

import "github.com/kraftlab/kraftlab/internal/kafkahash"

// FetcherID is the fetcher thread (0 to numFetchers-1) a partition goes to
// on every source broker: Kafka's
// Utils.abs(31 * topic.hashCode + partition) % numFetchers, with Java's
// String.hashCode and Java's wrapping int arithmetic, so that a partition
// lands on the thread with the same number as in Kafka.
func FetcherID(tp TopicPartition, numFetchers int) int {
	if numFetchers <= 1 {
		return 0
	}
	h := 31*kafkahash.String(tp.Topic) + tp.Partition
	return int(kafkahash.Abs(h) % int32(numFetchers))
}
