package pmap

import "hash/maphash"

var seed = maphash.MakeSeed()

// HashString hashes a string (with a seed chosen per process).
func HashString(s string) uint64 { return maphash.String(seed, s) }

// HashInt32 hashes a small integer key such as a partition id to itself:
// dense ids then fill the trie's slots evenly, level by level.
func HashInt32(i int32) uint64 { return uint64(uint32(i)) }

// Mix64 is splitmix64's finalizer, for keys whose bits are not random.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
