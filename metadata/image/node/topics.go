package node

import (
	"fmt"
	"strconv"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

const (
	byNameName = "byName"
	byIDName   = "byId"
)

// topicsNode is /image/topics (Kafka's TopicsImageNode).
type topicsNode struct {
	dir
	t *image.TopicsImage
}

func (topicsNode) ChildNames() []string { return []string{byNameName, byIDName} }

func (n topicsNode) Child(name string) Node {
	switch name {
	case byNameName:
		return byNameNode{t: n.t}
	case byIDName:
		return byIDNode{t: n.t}
	}
	return nil
}

func (n topicsNode) Print(p Printer) { printChildren(n, p) }

// byNameNode is /image/topics/byName (TopicsImageByNameNode).
type byNameNode struct {
	dir
	t *image.TopicsImage
}

func (n byNameNode) ChildNames() []string { return n.t.Names() }

func (n byNameNode) Child(name string) Node {
	if t := n.t.TopicByName(name); t != nil {
		return topicNode{t: t}
	}
	return nil
}

func (n byNameNode) Print(p Printer) { printChildren(n, p) }

// byIDNode is /image/topics/byId (TopicsImageByIdNode): topics by their
// base64 uuid.
type byIDNode struct {
	dir
	t *image.TopicsImage
}

func (n byIDNode) ChildNames() []string {
	var names []string
	for id := range n.t.Topics() {
		names = append(names, id.String())
	}
	return names
}

func (n byIDNode) Child(name string) Node {
	id, err := record.ParseUuid(name)
	if err != nil {
		return nil
	}
	if t := n.t.Topic(id); t != nil {
		return topicNode{t: t}
	}
	return nil
}

func (n byIDNode) Print(p Printer) { printChildren(n, p) }

// topicNode is one topic (TopicImageNode): name, id, and a file per
// partition.
type topicNode struct {
	dir
	t *image.TopicImage
}

func (n topicNode) ChildNames() []string {
	names := []string{"name", "id"}
	for _, p := range n.t.PartitionIDs() {
		names = append(names, strconv.Itoa(int(p)))
	}
	return names
}

func (n topicNode) Child(name string) Node {
	switch name {
	case "name":
		return leaf(n.t.Name())
	case "id":
		return leaf(n.t.ID().String())
	}
	id, ok := parseInt32(name)
	if !ok {
		return nil
	}
	if p := n.t.Partition(id); p != nil {
		return leaf(partitionString(p))
	}
	return nil
}

func (n topicNode) Print(p Printer) { printChildren(n, p) }

// leaderRecoveryStates are LeaderRecoveryState's names.
var leaderRecoveryStates = map[int8]string{record.LeaderRecovered: "RECOVERED", record.LeaderRecovering: "RECOVERING"}

// partitionString is Kafka's PartitionRegistration.toString; absent ELR
// lists print as the empty arrays Kafka keeps for them.
func partitionString(p *image.PartitionRegistration) string {
	lrs, ok := leaderRecoveryStates[p.LeaderRecoveryState]
	if !ok {
		lrs = fmt.Sprintf("%d", p.LeaderRecoveryState)
	}
	return fmt.Sprintf("PartitionRegistration(replicas=%s, directories=%s, isr=%s, removingReplicas=%s, addingReplicas=%s, elr=%s, lastKnownElr=%s, leader=%d, leaderRecoveryState=%s, leaderEpoch=%d, partitionEpoch=%d)",
		intList(p.Replicas), uuidList(p.Directories), intList(p.Isr), intList(p.RemovingReplicas), intList(p.AddingReplicas),
		intList(p.Elr), intList(p.LastKnownElr), p.Leader, lrs, p.LeaderEpoch, p.PartitionEpoch)
}
