package group

import "unicode/utf16"

// javaStringHash is Java's String.hashCode: s as UTF-16 code units, h =
// 31*h + unit, wrapping as an int32 does. A group id that is not valid
// UTF-8 hashes as Java would after decoding it (each bad byte a U+FFFD).
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// PartitionFor is the partition of __consumer_offsets that holds group id,
// of n: Kafka's Utils.abs(groupId.hashCode()) % n, where Utils.abs maps
// math.MinInt32 to 0. Every Kafka client and broker finds the same
// partition for a group this way, so it must match Java exactly.
func PartitionFor(id string, n int32) int32 {
	if n <= 0 {
		return 0
	}
	h := javaStringHash(id)
	if h < 0 {
		// -MinInt32 overflows to itself: Utils.abs makes it 0.
		h = -h
		if h < 0 {
			h = 0
		}
	}
	return h % n
}
