package cache

import (
	"math/rand/v2"

	"github.com/kraftlab/kraftlab/metadata/image"
)

// alive reports whether broker id is registered and unfenced
// (KRaftMetadataCache.hasAliveBroker).
func alive(img *image.MetadataImage, id int32) bool {
	b := img.Cluster().Broker(id)
	return b != nil && !b.Fenced
}

// reachable reports whether broker id is alive and has the listener, so a
// client on that listener can talk to it (maybeFilterAliveReplicas).
func reachable(img *image.MetadataImage, id int32, listener string) bool {
	b := img.Cluster().Broker(id)
	if b == nil || b.Fenced {
		return false
	}
	_, ok := b.Listener(listener)
	return ok
}

// randomAliveBroker is what a KRaft broker reports as the controller id:
// not a controller at all (clients cannot reach those) but any alive
// broker, picked at random so that the admin requests clients send "to
// the controller" spread over the brokers, which forward them
// (KRaftMetadataCache.getRandomAliveBrokerId). -1 if none is alive.
func randomAliveBroker(img *image.MetadataImage) int32 {
	var ids []int32
	for _, id := range img.Cluster().BrokerIDs() {
		if alive(img, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return -1
	}
	return ids[rand.IntN(len(ids))]
}

// The authorized-operations bit fields Kafka returns when asked and no
// authorizer is configured: every operation the resource type supports
// (AuthHelper.authorizedOperations, AclEntry.supportedOperations), one bit
// per AclOperation code. kraftlab has no authorizer.
const (
	// notAsked is the schema default, sent when the client did not ask.
	notAsked int32 = -2147483648
	// READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
	// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11.
	topicOperations int32 = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	// CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
	// ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
	clusterOperations int32 = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
)
