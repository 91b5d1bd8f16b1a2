package fetcher

import (
	"math"
	"unicode/utf16"
)

// FetcherID is the fetcher thread (0 to numFetchers-1) a partition goes to
// on every source broker: Kafka's
// Utils.abs(31 * topic.hashCode + partition) % numFetchers, with Java's
// String.hashCode and Java's wrapping int arithmetic, so that a partition
// lands on the thread with the same number as in Kafka.
func FetcherID(tp TopicPartition, numFetchers int) int {
	if numFetchers <= 1 {
		return 0
	}
	h := 31*javaStringHash(tp.Topic) + tp.Partition
	return int(kafkaAbs(h) % int32(numFetchers))
}

// javaStringHash is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over the string's UTF-16 code units, wrapping at 32 bits.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// kafkaAbs is Kafka's Utils.abs: the absolute value, except that
// math.MinInt32 (which has none) maps to 0 rather than to itself.
func kafkaAbs(n int32) int32 {
	if n == math.MinInt32 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}
