package group

import (
	"maps"
	"slices"
)

// The server-side assignors a consumer group may ask for
// (group.consumer.assignors, Kafka's default list); the first is the
// default.
const (
	UniformAssignor = "uniform"
	RangeAssignor   = "range"
	DefaultAssignor = UniformAssignor
)

// assignor computes a target assignment: each member's subscribed
// topics (existing ones, by name) and its previous target in, each
// member's new target out.
type assignor func(subs map[string][]TopicInfo, prev map[string]partSet) map[string]partSet

var assignors = map[string]assignor{UniformAssignor: uniformAssign, RangeAssignor: rangeAssign}

// KnownAssignor reports whether name is a server assignor this
// coordinator has.
func KnownAssignor(name string) bool { return assignors[name] != nil }

// uniformAssign spreads the partitions evenly over the members subscribed
// to them, keeping each partition with its previous owner as far as the
// balance allows (what Kafka's UniformAssignor aims for; its exact
// choices differ).
func uniformAssign(subs map[string][]TopicInfo, prev map[string]partSet) map[string]partSet {
	ids := slices.Sorted(maps.Keys(subs))
	out := make(map[string]partSet, len(ids))
	eligible := map[[16]byte]map[string]bool{}
	topics := map[[16]byte]TopicInfo{}
	for _, id := range ids {
		out[id] = partSet{}
		for _, t := range subs[id] {
			if eligible[t.ID] == nil {
				eligible[t.ID] = map[string]bool{}
			}
			eligible[t.ID][id] = true
			topics[t.ID] = t
		}
	}
	var all []idPartition
	for _, tid := range slices.SortedFunc(maps.Keys(topics), func(a, b [16]byte) int { return slices.Compare(a[:], b[:]) }) {
		for p := range topics[tid].Partitions {
			all = append(all, idPartition{tid, p})
		}
	}
	if len(ids) == 0 {
		return out
	}
	// Each member's share: the floor, one more for as many as the
	// remainder allows.
	floor, extra := len(all)/len(ids), len(all)%len(ids)
	done := map[idPartition]bool{}
	for _, id := range ids {
		for _, tp := range sortedParts(prev[id]) {
			if !eligible[tp.topic][id] || tp.partition >= topics[tp.topic].Partitions || done[tp] {
				continue
			}
			n := len(out[id])
			if n >= floor+1 || (n >= floor && extra == 0) {
				continue
			}
			if n == floor {
				extra--
			}
			out[id][tp] = struct{}{}
			done[tp] = true
		}
	}
	for _, tp := range all {
		if done[tp] {
			continue
		}
		best := ""
		for _, id := range ids {
			if eligible[tp.topic][id] && (best == "" || len(out[id]) < len(out[best])) {
				best = id
			}
		}
		if best != "" {
			out[best][tp] = struct{}{}
		}
	}
	return out
}

// rangeAssign gives each member of a topic's subscribers, in member id
// order, a contiguous range of its partitions, the first ones one more
// when they do not divide evenly (Kafka's RangeAssignor without its
// stickiness).
func rangeAssign(subs map[string][]TopicInfo, _ map[string]partSet) map[string]partSet {
	ids := slices.Sorted(maps.Keys(subs))
	out := make(map[string]partSet, len(ids))
	byTopic := map[[16]byte][]string{}
	topics := map[[16]byte]TopicInfo{}
	for _, id := range ids {
		out[id] = partSet{}
		for _, t := range subs[id] {
			byTopic[t.ID] = append(byTopic[t.ID], id)
			topics[t.ID] = t
		}
	}
	for tid, members := range byTopic {
		n := int(topics[tid].Partitions)
		share, extra := n/len(members), n%len(members)
		p := 0
		for i, id := range members {
			k := share
			if i < extra {
				k++
			}
			for range k {
				out[id][idPartition{tid, int32(p)}] = struct{}{}
				p++
			}
		}
	}
	return out
}

// sortedParts is set in topic id and partition order.
func sortedParts(set partSet) []idPartition {
	out := slices.Collect(maps.Keys(set))
	slices.SortFunc(out, func(a, b idPartition) int {
		if c := slices.Compare(a.topic[:], b.topic[:]); c != 0 {
			return c
		}
		return int(a.partition - b.partition)
	})
	return out
}
