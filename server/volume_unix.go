//go:build unix

package server

import (
	"math"

	"golang.org/x/sys/unix"
)

// volumeBytes are the size and the space free to this process of the
// volume holding dir, -1 each when unknown (Kafka's
// UNKNOWN_VOLUME_BYTES).
func volumeBytes(dir string) (total, usable int64) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	bs := uint64(st.Bsize)
	return clampInt64(uint64(st.Blocks) * bs), clampInt64(uint64(st.Bavail) * bs)
}

// clampInt64 is n, or MaxInt64 above it (Kafka's adjustForLargeFileSystems).
func clampInt64(n uint64) int64 {
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}
