package server

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/kafkazk"
)

// createPartitions is CreatePartitions on the controller broker (Kafka
// 3.9's ZkAdminManager.createPartitions): each topic's assignment grows
// in ZooKeeper, the controller's watch on the topic makes the new
// partitions, and the answer waits until this broker's metadata shows
// them with leaders, up to the request's timeout.
func (b *ZkBrokerServer) createPartitions(req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	resp := kmsg.NewPtrCreatePartitionsResponse()
	zc := b.zk.Load()
	brokers, _, err := zc.BrokerIDs()
	slices.Sort(brokers)
	grown := map[string]int32{}
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		var code int16
		var msg string
		switch {
		case err != nil:
			code, msg = kerr.UnknownServerError.Code, err.Error()
		case countTopic(req.Topics, t.Topic) > 1:
			code, msg = kerr.InvalidRequest.Code, "Duplicate topic in request."
		default:
			var a kafkazk.Assignment
			a, code, msg = addPartitions(zc, t, brokers)
			if code == 0 && !req.ValidateOnly {
				if err := zc.SetAssignment(a); err != nil {
					code, msg = kerr.UnknownServerError.Code, err.Error()
				} else {
					grown[t.Topic] = t.Count
				}
			}
		}
		rt.ErrorCode = code
		if msg != "" {
			rt.ErrorMessage = &msg
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(grown) == 0 {
		return resp
	}
	topics := slices.Sorted(maps.Keys(grown))
	if !b.awaitMetadata(req.TimeoutMillis, func() bool { return b.leadersKnown(topics, grown) }) {
		for i := range resp.Topics {
			if _, ok := grown[resp.Topics[i].Topic]; ok {
				resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
			}
		}
	}
	return resp
}

// addPartitions checks one topic of a CreatePartitions against its
// assignment in ZooKeeper and returns the grown assignment: the
// partitions the request names, or Kafka's rack-unaware spread over the
// registered brokers from where partition 0's first replica is (AdminZkClient's
// createNewPartitionsAssignment).
func addPartitions(zc *kafkazk.Client, t kmsg.CreatePartitionsRequestTopic, brokers []int32) (kafkazk.Assignment, int16, string) {
	a, ok, err := zc.Assignment(t.Topic)
	switch {
	case err != nil:
		return a, kerr.UnknownServerError.Code, err.Error()
	case !ok:
		return a, kerr.UnknownTopicOrPartition.Code, fmt.Sprintf("The topic '%s' does not exist.", t.Topic)
	}
	old := int32(len(a.Replicas))
	add := t.Count - old
	switch {
	case add < 0:
		return a, kerr.InvalidPartitions.Code, fmt.Sprintf("Topic currently has %d partitions, which is higher than the requested %d.", old, t.Count)
	case add == 0:
		return a, kerr.InvalidPartitions.Code, fmt.Sprintf("Topic already has %d partitions.", old)
	}
	first, ok := a.Replicas[0]
	if !ok || len(first) == 0 {
		return a, kerr.UnknownServerError.Code, fmt.Sprintf("Unexpected existing replica assignment for topic '%s', partition id 0 is missing.", t.Topic)
	}
	rf := int32(len(first))
	var added map[int32][]int32
	if t.Assignment != nil {
		var code int16
		var msg string
		if added, code, msg = namedPartitions(t, old, add, rf, brokers); code != 0 {
			return a, code, msg
		}
	} else {
		if int(rf) > len(brokers) {
			return a, kerr.InvalidReplicationFactor.Code, fmt.Sprintf("Replication factor: %d larger than available brokers: %d.", rf, len(brokers))
		}
		start := int32(max(0, slices.IndexFunc(brokers, func(id int32) bool { return id >= first[0] })))
		added = spreadReplicasFrom(brokers, old, add, rf, start, start)
	}
	grown := kafkazk.Assignment{Topic: a.Topic, ID: a.ID, Replicas: maps.Clone(a.Replicas)}
	maps.Copy(grown.Replicas, added)
	return grown, 0, ""
}

// namedPartitions are the new partitions a request assigns itself,
// checked as Kafka checks them.
func namedPartitions(t kmsg.CreatePartitionsRequestTopic, old, add, rf int32, brokers []int32) (map[int32][]int32, int16, string) {
	var unknown []string
	for _, as := range t.Assignment {
		for _, id := range as.Replicas {
			if !slices.Contains(brokers, id) && !slices.Contains(unknown, fmt.Sprint(id)) {
				unknown = append(unknown, fmt.Sprint(id))
			}
		}
	}
	if len(unknown) > 0 {
		return nil, kerr.InvalidReplicaAssignment.Code, "Unknown broker(s) in replica assignment: " + strings.Join(unknown, ", ") + "."
	}
	if int32(len(t.Assignment)) != add {
		return nil, kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("Increasing the number of partitions by %d but %d assignments provided.", add, len(t.Assignment))
	}
	out := map[int32][]int32{}
	for i, as := range t.Assignment {
		p := old + int32(i)
		switch {
		case len(as.Replicas) == 0:
			return nil, kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("Cannot have replication factor of 0 for partition id %d.", p)
		case len(slices.Compact(slices.Sorted(slices.Values(as.Replicas)))) != len(as.Replicas):
			return nil, kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("Duplicate brokers not allowed in replica assignment for partition id %d.", p)
		case int32(len(as.Replicas)) != rf:
			return nil, kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("Inconsistent replication factor between partitions, partition 0 has %d while partition %d has %d.", rf, p, len(as.Replicas))
		}
		out[p] = slices.Clone(as.Replicas)
	}
	return out, 0, ""
}

func countTopic(ts []kmsg.CreatePartitionsRequestTopic, topic string) int {
	n := 0
	for _, t := range ts {
		if t.Topic == topic {
			n++
		}
	}
	return n
}
