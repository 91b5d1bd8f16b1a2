package view

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Topic is a topic as the cluster's committed metadata holds it.
type Topic struct {
	Name string `json:"name"`
	// ID is the topic's id, in Kafka's base64 spelling.
	ID         string      `json:"topicId"`
	Partitions []Partition `json:"partitions"`
	// OnBrokers are the running brokers whose metadata image has the
	// topic: the ones that have applied its creation.
	OnBrokers []int32 `json:"onBrokers"`
}

// Partition is one partition's registration, with Kafka's field names.
type Partition struct {
	Partition int32 `json:"partition"`
	// Leader is the leader's broker ID, or NoLeader.
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leaderEpoch"`
	PartitionEpoch int32   `json:"partitionEpoch"`
	Replicas       []int32 `json:"replicas"`
	Isr            []int32 `json:"isr"`
	// Elr are the eligible leader replicas (KIP-966): members the ISR
	// lost below min.insync.replicas that may still lead, once the ISR is
	// empty. LastKnownElr is the leader the partition had when it went
	// leaderless. Both are empty with eligible.leader.replicas.version 0.
	Elr          []int32 `json:"eligibleLeaderReplicas"`
	LastKnownElr []int32 `json:"lastKnownElr"`
	// AddingReplicas and RemovingReplicas are those a partition
	// reassignment in progress brings in and takes away (Kafka's names);
	// empty when none runs.
	AddingReplicas   []int32 `json:"addingReplicas,omitempty"`
	RemovingReplicas []int32 `json:"removingReplicas,omitempty"`
	// HighWatermark is the leader replica's, as its broker holds it; -1
	// while no running broker leads the partition.
	HighWatermark int64 `json:"highWatermark"`
	// ReplicaStates are the replicas as their brokers host them, in the
	// order of Replicas.
	ReplicaStates []PartitionReplica `json:"replicaStates"`
}

// Topic returns the topic named name.
func (v *View) Topic(name string) (*Topic, bool) {
	for i := range v.Topics {
		if v.Topics[i].Name == name {
			return &v.Topics[i], true
		}
	}
	return nil, false
}

// Partition returns partition p of topic, if both exist.
func (v *View) Partition(topic string, p int32) (*Partition, bool) {
	t, ok := v.Topic(topic)
	if !ok {
		return nil, false
	}
	for i := range t.Partitions {
		if t.Partitions[i].Partition == p {
			return &t.Partitions[i], true
		}
	}
	return nil, false
}

// TopicPartition names one partition as Kafka spells it, TOPIC-P.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String returns TOPIC-P.
func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// ParseTopicPartition reads TOPIC-P: the partition is the number after
// the last dash, since topic names may hold dashes themselves.
func ParseTopicPartition(s string) (TopicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 || i == len(s)-1 {
		return TopicPartition{}, fmt.Errorf("bad partition %q: want TOPIC-P, e.g. orders-0", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 {
		return TopicPartition{}, fmt.Errorf("bad partition %q: %q is not a partition number", s, s[i+1:])
	}
	return TopicPartition{Topic: s[:i], Partition: int32(p)}, nil
}

// Summary says what a partition looks like, for conditions; the ELR
// and a reassignment only when they hold something.
func (p *Partition) Summary() string {
	s := fmt.Sprintf("leader %s, leader epoch %d, replicas %s, isr %s", leaderName(p.Leader), p.LeaderEpoch, ids(p.Replicas), ids(p.Isr))
	if len(p.Elr) > 0 || len(p.LastKnownElr) > 0 {
		s += fmt.Sprintf(", elr %s, last known elr %s", ids(p.Elr), ids(p.LastKnownElr))
	}
	if p.Reassigning() {
		s += fmt.Sprintf(", reassigning: adding %s, removing %s", ids(p.AddingReplicas), ids(p.RemovingReplicas))
	}
	return s
}

// Reassigning reports whether a partition reassignment is in progress.
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

func leaderName(id int32) string {
	if id == NoLeader {
		return "none"
	}
	return strconv.Itoa(int(id))
}

func ids(list []int32) string {
	s := make([]string, len(list))
	for i, id := range list {
		s[i] = strconv.Itoa(int(id))
	}
	return "[" + strings.Join(s, ",") + "]"
}

// sortTopics orders topics by name, so that views compare and print the
// same way every time.
func sortTopics(ts []Topic) {
	slices.SortFunc(ts, func(a, b Topic) int { return strings.Compare(a.Name, b.Name) })
}

// countLeaderships fills each broker's PartitionsLed from the topics.
func (v *View) countLeaderships() {
	led := make(map[int32]int)
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if p.Leader != NoLeader {
				led[p.Leader]++
			}
		}
	}
	for i := range v.Nodes {
		if b := v.Nodes[i].Broker; b != nil {
			b.PartitionsLed = led[v.Nodes[i].ID]
		}
	}
	for i := range v.ExternalBrokers {
		v.ExternalBrokers[i].PartitionsLed = led[v.ExternalBrokers[i].ID]
	}
}
