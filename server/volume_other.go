//go:build !unix

package server

// volumeBytes is unknown here (Kafka's UNKNOWN_VOLUME_BYTES).
func volumeBytes(string) (total, usable int64) { return -1, -1 }
