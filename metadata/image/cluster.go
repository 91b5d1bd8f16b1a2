package image

import (
	"maps"
	"slices"
)

// ClusterImage holds the registered brokers by id. (Kafka's also holds the
// controllers' registrations, KIP-919; kraftlab's static quorum has none.)
type ClusterImage struct {
	brokers map[int32]*BrokerRegistration
}

var emptyCluster = &ClusterImage{brokers: map[int32]*BrokerRegistration{}}

// Broker returns the registration of broker id, nil if it has none.
func (c *ClusterImage) Broker(id int32) *BrokerRegistration { return c.brokers[id] }

// BrokerIDs lists the registered brokers' ids, sorted.
func (c *ClusterImage) BrokerIDs() []int32 {
	return slices.Sorted(maps.Keys(c.brokers))
}

// Len is the number of registered brokers.
func (c *ClusterImage) Len() int { return len(c.brokers) }

// IsEmpty reports whether no broker is registered.
func (c *ClusterImage) IsEmpty() bool { return len(c.brokers) == 0 }

// Equal reports whether two images register the same brokers.
func (c *ClusterImage) Equal(o *ClusterImage) bool {
	return maps.EqualFunc(c.brokers, o.brokers, (*BrokerRegistration).Equal)
}
