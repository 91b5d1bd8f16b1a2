// Package kafkahash holds the hash functions Kafka's clients and brokers
// must agree on bit for bit: Java's String.hashCode, Kafka's Utils.abs,
// and the partition of __consumer_offsets a group lives in.
package kafkahash

import (
	"math"
	"unicode/utf16"
)

// String is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1] over the
// string's UTF-16 code units, wrapping at 32 bits. A string that is not
// valid UTF-8 hashes as Java would after decoding it (each bad byte a
// U+FFFD).
func String(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// Abs is Kafka's Utils.abs: the absolute value, except that math.MinInt32
// (which has none) maps to 0 rather than to itself.
func Abs(n int32) int32 {
	if n == math.MinInt32 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

// GroupPartition is the partition of __consumer_offsets, of n, that holds
// group id: Kafka's Utils.abs(groupId.hashCode()) % n. Every client's
// FindCoordinator and every broker find the same partition this way.
func GroupPartition(id string, n int32) int32 {
	if n <= 0 {
		return 0
	}
	return Abs(String(id)) % n
}
