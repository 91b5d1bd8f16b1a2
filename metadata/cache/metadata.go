package cache

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata answers a MetadataRequest from img for the broker nodeID, whose
// clients use listener (e.g. "PLAINTEXT"), as Kafka 4.4's
// KafkaApis.handleTopicMetadataRequest does with no authorizer and
// auto.create.topics.enable off:
//   - Brokers are the alive brokers that have the listener;
//     ControllerID is a random alive broker (clients send it the admin
//     requests a broker forwards to the active controller).
//   - A null Topics (or, at v0, an empty one) asks for every topic; an
//     empty one for none. A missing name gets UNKNOWN_TOPIC_OR_PARTITION
//     (INVALID_TOPIC_EXCEPTION if the name could never exist); a topic asked
//     by id (v12+) that is missing gets UNKNOWN_TOPIC_ID.
//   - Each partition has its leader and leader epoch, its replicas, ISR
//     and offline replicas (not registered, fenced, without the listener,
//     or in an offline log directory). A leader that is not registered
//     gives LEADER_NOT_AVAILABLE with leader -1; one registered without
//     the listener gives LISTENER_NOT_FOUND (v6+).
//
// nodeID is the answering broker; Kafka's answer does not depend on it, and
// neither does this one.
func Metadata(img *image.MetadataImage, clusterID string, nodeID int32, listener string, req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	_ = nodeID
	v := req.GetVersion()
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = v
	if err := validateMetadataRequest(req); err != nil {
		return metadataErrorResponse(req, err)
	}
	for _, id := range img.Cluster().BrokerIDs() {
		b := img.Cluster().Broker(id)
		ep, ok := b.Listener(listener)
		if b.Fenced || !ok {
			continue
		}
		rb := kmsg.NewMetadataResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack = id, ep.Host, int32(ep.Port), b.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}
	if clusterID != "" {
		resp.ClusterID = &clusterID
	}
	resp.ControllerID = randomAliveBroker(img)
	resp.AuthorizedOperations = notAsked
	if v >= 8 && v <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterOperations
	}

	opts := partitionOptions{
		listener:                  listener,
		errorUnavailableEndpoints: v == 0,
		errorUnavailableListeners: v >= 6,
	}
	allTopics := req.Topics == nil || (len(req.Topics) == 0 && v == 0)
	var names []string
	switch {
	case allTopics:
		names = img.Topics().Names()
	case usesTopicIDs(req):
		// As Kafka: once any topic is named by id, the request is by id,
		// and the names given beside the ids are not looked at.
		seen := map[record.Uuid]bool{}
		for _, t := range req.Topics {
			id := record.Uuid(t.TopicID)
			if id == record.ZeroUuid || seen[id] {
				continue
			}
			seen[id] = true
			if topic := img.Topics().Topic(id); topic != nil {
				names = append(names, topic.Name())
				continue
			}
			rt := kmsg.NewMetadataResponseTopic()
			rt.ErrorCode, rt.TopicID = kerr.UnknownTopicID.Code, t.TopicID
			rt.AuthorizedOperations = notAsked
			resp.Topics = append(resp.Topics, rt)
		}
	default:
		seen := map[string]bool{}
		for _, t := range req.Topics {
			if t.Topic == nil || seen[*t.Topic] {
				continue
			}
			seen[*t.Topic] = true
			names = append(names, *t.Topic)
		}
	}
	for _, name := range names {
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic = &name
		rt.IsInternal = IsInternal(name)
		rt.AuthorizedOperations = notAsked
		if v >= 8 && req.IncludeTopicAuthorizedOperations {
			rt.AuthorizedOperations = topicOperations
		}
		topic := img.Topics().TopicByName(name)
		if topic != nil {
			rt.Partitions = partitionsMetadata(img, topic, opts)
		}
		if len(rt.Partitions) == 0 {
			// A topic without partitions is answered as a missing one,
			// as Kafka's getTopicMetadata drops it and then finds it
			// missing; its id stays known.
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if !validTopicName(name) {
				rt.ErrorCode = kerr.InvalidTopicException.Code
			}
			if allTopics {
				continue
			}
		}
		if topic != nil {
			rt.TopicID = topic.ID()
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// validateMetadataRequest refuses what Kafka refuses with
// InvalidRequestException: before v12 a topic must be named and not asked
// by id (v10 and v11 carry the field but Kafka never served it).
func validateMetadataRequest(req *kmsg.MetadataRequest) *kerr.Error {
	if req.GetVersion() >= 12 {
		return nil
	}
	for _, t := range req.Topics {
		if t.Topic == nil || record.Uuid(t.TopicID) != record.ZeroUuid {
			return kerr.InvalidRequest
		}
	}
	return nil
}

// metadataErrorResponse is Kafka's MetadataRequest.getErrorResponse: every
// topic asked gets the error, and the top level too (v13+).
func metadataErrorResponse(req *kmsg.MetadataRequest, err *kerr.Error) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = req.GetVersion()
	resp.ErrorCode = err.Code
	resp.ControllerID = -1
	resp.AuthorizedOperations = notAsked
	for _, t := range req.Topics {
		rt := kmsg.NewMetadataResponseTopic()
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		rt.Topic, rt.TopicID, rt.ErrorCode = &name, t.TopicID, err.Code
		rt.AuthorizedOperations = notAsked
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func usesTopicIDs(req *kmsg.MetadataRequest) bool {
	for _, t := range req.Topics {
		if record.Uuid(t.TopicID) != record.ZeroUuid {
			return true
		}
	}
	return false
}

type partitionOptions struct {
	listener string
	// errorUnavailableEndpoints (v0 only) lists only the reachable
	// replicas and ISR members and says REPLICA_NOT_AVAILABLE when some
	// are missing; later versions list them all.
	errorUnavailableEndpoints bool
	// errorUnavailableListeners (v6+) says LISTENER_NOT_FOUND for a
	// registered leader without the listener, rather than
	// LEADER_NOT_AVAILABLE.
	errorUnavailableListeners bool
}

// partitionsMetadata is KRaftMetadataCache.partitionMetadata, partitions by id.
func partitionsMetadata(img *image.MetadataImage, topic *image.TopicImage, o partitionOptions) []kmsg.MetadataResponseTopicPartition {
	ids := topic.PartitionIDs()
	out := make([]kmsg.MetadataResponseTopicPartition, 0, len(ids))
	for _, id := range ids {
		p := topic.Partition(id)
		rp := kmsg.NewMetadataResponseTopicPartition()
		rp.Partition, rp.LeaderEpoch = id, p.LeaderEpoch
		rp.Replicas, rp.ISR = p.Replicas, p.Isr
		if o.errorUnavailableEndpoints {
			rp.Replicas = filterReachable(img, p.Replicas, o.listener)
			rp.ISR = filterReachable(img, p.Isr, o.listener)
		}
		rp.Replicas, rp.ISR = nonNil(rp.Replicas), nonNil(rp.ISR)
		rp.OfflineReplicas = offlineReplicas(img, p, o.listener)
		// Kafka's leader test (getAliveEndpoint) asks only that the
		// leader be registered and have the listener, not that it be
		// unfenced: the controller moves leadership off a fenced broker
		// itself, and until that change arrives clients keep the leader.
		leader := img.Cluster().Broker(p.Leader)
		switch {
		case leader == nil:
			rp.ErrorCode, rp.Leader = kerr.LeaderNotAvailable.Code, -1
		case !hasListener(leader, o.listener):
			rp.ErrorCode, rp.Leader = kerr.LeaderNotAvailable.Code, -1
			if o.errorUnavailableListeners {
				rp.ErrorCode = kerr.ListenerNotFound.Code
			}
		default:
			rp.Leader = p.Leader
			if len(rp.Replicas) < len(p.Replicas) || len(rp.ISR) < len(p.Isr) {
				rp.ErrorCode = kerr.ReplicaNotAvailable.Code
			}
		}
		out = append(out, rp)
	}
	return out
}

func hasListener(b *image.BrokerRegistration, listener string) bool {
	_, ok := b.Listener(listener)
	return ok
}

func filterReachable(img *image.MetadataImage, ids []int32, listener string) []int32 {
	out := make([]int32, 0, len(ids))
	for _, id := range ids {
		if reachable(img, id, listener) {
			out = append(out, id)
		}
	}
	return out
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// offlineReplicas are the replicas a client cannot count on
// (KRaftMetadataCache.getOfflineReplicas): the broker is not registered,
// is fenced, lacks the listener, or holds the replica in a directory it
// does not report online.
func offlineReplicas(img *image.MetadataImage, p *image.PartitionRegistration, listener string) []int32 {
	out := []int32{}
	for _, id := range p.Replicas {
		b := img.Cluster().Broker(id)
		if b == nil || b.Fenced {
			out = append(out, id)
			continue
		}
		if !hasListener(b, listener) {
			out = append(out, id)
			continue
		}
		if !p.ReplicaOnline(id, b) {
			out = append(out, id)
		}
	}
	return out
}

// IsInternal is Kafka's Topic.isInternal: the topics the group,
// transaction and share coordinators keep, which Metadata marks internal
// and clients may not produce to.
func IsInternal(name string) bool {
	switch name {
	case "__consumer_offsets", "__transaction_state", "__share_group_state":
		return true
	}
	return false
}

// validTopicName is Kafka's Topic.validate: 1 to 249 characters of
// [a-zA-Z0-9._-], and neither "." nor "..".
func validTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return false
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
