package benchkit

import (
	"encoding/binary"
	"math/rand/v2"
	"time"
)

// noise is random bytes that record values are cut from. A value of
// zeros would shrink to almost nothing under any compression codec, so
// the cluster would move a fraction of the bytes a row's MB/s claims;
// random bytes do not compress, and the producers send them uncompressed
// (compression.type none, the Java client's default) besides.
var noise = func() []byte {
	b := make([]byte, 2<<20)
	r := rand.NewChaCha8([32]byte{'k', 'r', 'a', 'f', 't', 'l', 'a', 'b'})
	r.Read(b)
	return b
}()

// recordValue is a value of size bytes (at least minProduceRecordBytes,
// at most 1 MiB, as ProduceWorkload.Validate checks) whose first eight
// hold the time it was produced, for the end-to-end latency; the rest is
// the n-th cut of noise.
func recordValue(size int, n int64, at time.Time) []byte {
	v := make([]byte, size)
	off := int(uint64(n)*4099) % (len(noise) - size + 1)
	copy(v, noise[off:off+size])
	binary.BigEndian.PutUint64(v, uint64(at.UnixNano()))
	return v
}
