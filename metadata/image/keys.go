package image

import (
	"encoding/binary"
	"iter"
	"math/bits"

	"github.com/kraftlab/kraftlab/metadata/internal/pmap"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// hashUuid mixes both halves: topic ids are random in Kafka, but tests and
// tools often number them.
func hashUuid(u record.Uuid) uint64 {
	hi := binary.BigEndian.Uint64(u[:8])
	lo := binary.BigEndian.Uint64(u[8:])
	return pmap.Mix64(hi ^ bits.RotateLeft64(pmap.Mix64(lo), 32))
}

func hashResource(r ConfigResource) uint64 {
	return pmap.HashString(r.Name) ^ pmap.Mix64(uint64(uint8(r.Type))+1)
}

type partitionMap = pmap.Map[int32, *PartitionRegistration]

// mapOf is a persistent map of topics by K.
type mapOf[K comparable] = pmap.Map[K, *TopicImage]

var (
	noPartitions   = pmap.New[int32, *PartitionRegistration](pmap.HashInt32)
	noTopicsByID   = pmap.New[record.Uuid, *TopicImage](hashUuid)
	noTopicsByName = pmap.New[string, *TopicImage](pmap.HashString)
	noConfigs      = pmap.New[ConfigResource, *ConfigurationImage](hashResource)
)

// keysOf yields the keys of a sequence of pairs.
func keysOf[K, V any](seq iter.Seq2[K, V]) iter.Seq[K] {
	return func(yield func(K) bool) {
		for k := range seq {
			if !yield(k) {
				return
			}
		}
	}
}
