package image

import (
	"maps"
	"slices"
)

// ClusterImage holds the registered brokers and controllers by id.
// kraftlab's own controllers never register (their quorum is static), so
// controllers come only from a log a Kafka controller wrote (KIP-919).
type ClusterImage struct {
	brokers     map[int32]*BrokerRegistration
	controllers map[int32]*ControllerRegistration
}

var emptyCluster = &ClusterImage{brokers: map[int32]*BrokerRegistration{}, controllers: map[int32]*ControllerRegistration{}}

// Broker returns the registration of broker id, nil if it has none.
func (c *ClusterImage) Broker(id int32) *BrokerRegistration { return c.brokers[id] }

// BrokerIDs lists the registered brokers' ids, sorted.
func (c *ClusterImage) BrokerIDs() []int32 {
	return slices.Sorted(maps.Keys(c.brokers))
}

// Len is the number of registered brokers.
func (c *ClusterImage) Len() int { return len(c.brokers) }

// Controller returns the registration of controller id, nil if it has
// none.
func (c *ClusterImage) Controller(id int32) *ControllerRegistration { return c.controllers[id] }

// ControllerIDs lists the registered controllers' ids, sorted.
func (c *ClusterImage) ControllerIDs() []int32 {
	return slices.Sorted(maps.Keys(c.controllers))
}

// IsEmpty reports whether no broker and no controller is registered.
func (c *ClusterImage) IsEmpty() bool { return len(c.brokers) == 0 && len(c.controllers) == 0 }

// Equal reports whether two images register the same brokers and
// controllers.
func (c *ClusterImage) Equal(o *ClusterImage) bool {
	return maps.EqualFunc(c.brokers, o.brokers, (*BrokerRegistration).Equal) &&
		maps.EqualFunc(c.controllers, o.controllers, (*ControllerRegistration).Equal)
}
