package interop

import (
	"regexp"
	"strconv"
	"strings"
)

// TopicPartition is one partition as a tool prints it: its leader (-1 for
// none), replicas and in-sync replicas.
type TopicPartition struct {
	Partition int32   `json:"partition"`
	Leader    int32   `json:"leader"`
	Replicas  []int32 `json:"replicas"`
	Isr       []int32 `json:"isr"`
	// Elr and LastKnownElr are the eligible leader replicas (KIP-966);
	// kafka-topics prints them from DescribeTopicPartitions, "N/A" when
	// the broker does not serve it (ElrUnknown).
	Elr          []int32 `json:"eligibleLeaderReplicas"`
	LastKnownElr []int32 `json:"lastKnownElr"`
	ElrUnknown   bool    `json:"-"`
}

// TopicDescription is one topic as `kafka-topics --describe` prints it,
// or as `kraftlab topics describe --json` does (the same JSON keys).
type TopicDescription struct {
	Name       string           `json:"name"`
	TopicID    string           `json:"topicId"`
	Partitions []TopicPartition `json:"partitions"`
	// The summary line's fields (kafka-topics only).
	PartitionCount    int    `json:"-"`
	ReplicationFactor int    `json:"-"`
	Configs           string `json:"-"`
}

var (
	reTopicSummary = regexp.MustCompile(`^Topic: (\S+)\tTopicId: (\S+)\tPartitionCount: (\d+)\tReplicationFactor: (\d+)\tConfigs: ?(.*)$`)
	reTopicLine    = regexp.MustCompile(`^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (\S+)\tReplicas: ([\d,]*)\tIsr: ([\d,]*)`)
	reElr          = regexp.MustCompile(`\tElr: ([\d,]*|N/A)\tLastKnownElr: ([\d,]*|N/A)`)
)

// ParseTopicsDescribe reads `kafka-topics --describe`: a summary line per
// topic ("Topic: t<TAB>TopicId: …<TAB>PartitionCount: …"), then a line per
// partition, in the order printed.
func ParseTopicsDescribe(out string) []TopicDescription {
	var topics []TopicDescription
	for _, line := range strings.Split(out, "\n") {
		if m := reTopicSummary.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[3])
			rf, _ := strconv.Atoi(m[4])
			topics = append(topics, TopicDescription{Name: m[1], TopicID: m[2], PartitionCount: n, ReplicationFactor: rf, Configs: m[5]})
			continue
		}
		m := reTopicLine.FindStringSubmatch(line)
		if m == nil || len(topics) == 0 || topics[len(topics)-1].Name != m[1] {
			continue
		}
		p, _ := strconv.Atoi(m[2])
		leader := int64(-1) // Kafka prints "none" for no leader
		if m[3] != "none" {
			leader, _ = strconv.ParseInt(m[3], 10, 32)
		}
		t := &topics[len(topics)-1]
		tp := TopicPartition{Partition: int32(p), Leader: int32(leader), Replicas: parseIDs(m[4]), Isr: parseIDs(m[5]), ElrUnknown: true}
		if e := reElr.FindStringSubmatch(line); e != nil && e[1] != "N/A" && e[2] != "N/A" {
			tp.Elr, tp.LastKnownElr, tp.ElrUnknown = parseIDs(e[1]), parseIDs(e[2]), false
		}
		t.Partitions = append(t.Partitions, tp)
	}
	return topics
}

// parseIDs reads "101,102" (empty for none).
func parseIDs(s string) []int32 {
	var ids []int32
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32); err == nil {
			ids = append(ids, int32(n))
		}
	}
	return ids
}
