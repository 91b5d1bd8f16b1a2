package zkcontroller

import (
	"slices"

	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// controllerContext is what the active controller knows of the cluster
// (Kafka's ControllerContext): read from ZooKeeper at failover, then kept
// up to date by the controller's own writes and the watches.
type controllerContext struct {
	seat kafkazk.Seat
	// live are the registered brokers, with their epochs (czxids);
	// shuttingDown those of them in a controlled shutdown.
	live         map[int32]kafkazk.Broker
	shuttingDown map[int32]bool
	topics       map[string]kafkazk.Assignment
	states       map[TopicPartition]kafkazk.LeaderAndIsr
}

func newContext(seat kafkazk.Seat) *controllerContext {
	return &controllerContext{
		seat:         seat,
		live:         map[int32]kafkazk.Broker{},
		shuttingDown: map[int32]bool{},
		topics:       map[string]kafkazk.Assignment{},
		states:       map[TopicPartition]kafkazk.LeaderAndIsr{},
	}
}

// isLive reports whether broker id is registered.
func (c *controllerContext) isLive(id int32) bool {
	_, ok := c.live[id]
	return ok
}

// eligible reports whether broker id may lead or join an ISR: live and
// not shutting down.
func (c *controllerContext) eligible(id int32) bool { return c.isLive(id) && !c.shuttingDown[id] }

// liveIDs are the live brokers' ids, sorted.
func (c *controllerContext) liveIDs() []int32 {
	ids := make([]int32, 0, len(c.live))
	for id := range c.live {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// replicas are tp's assigned replicas, preferred leader first.
func (c *controllerContext) replicas(tp TopicPartition) []int32 {
	return c.topics[tp.Topic].Replicas[tp.Partition]
}

// topicID is topic's id, zero if it has none.
func (c *controllerContext) topicID(topic string) record.Uuid { return c.topics[topic].ID }

// partitions are every partition with a state, in order.
func (c *controllerContext) partitions() []TopicPartition {
	tps := make([]TopicPartition, 0, len(c.states))
	for tp := range c.states {
		tps = append(tps, tp)
	}
	sortPartitions(tps)
	return tps
}

// partitionsOn are the partitions with a state that broker id is a
// replica of, in order.
func (c *controllerContext) partitionsOn(id int32) []TopicPartition {
	var tps []TopicPartition
	for tp := range c.states {
		if slices.Contains(c.replicas(tp), id) {
			tps = append(tps, tp)
		}
	}
	sortPartitions(tps)
	return tps
}

// byTopicID finds a topic by its id.
func (c *controllerContext) byTopicID(id record.Uuid) (string, bool) {
	for name, a := range c.topics {
		if a.ID == id {
			return name, true
		}
	}
	return "", false
}

func sortPartitions(tps []TopicPartition) {
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
}

// firstState is a new partition's first state: live[0] leads, live is
// the ISR.
func firstState(live []int32, controllerEpoch int32) kafkazk.LeaderAndIsr {
	return kafkazk.LeaderAndIsr{Leader: live[0], LeaderEpoch: 0, ISR: slices.Clone(live), ControllerEpoch: controllerEpoch}
}

// firstEligibleInISR is the replica of tp a leader election picks (Kafka's
// offline and controlled-shutdown elections): the first in assignment
// order that is eligible and in s's ISR; noLeader if none is.
func (c *controllerContext) firstEligibleInISR(tp TopicPartition, s kafkazk.LeaderAndIsr) int32 {
	for _, r := range c.replicas(tp) {
		if c.eligible(r) && slices.Contains(s.ISR, r) {
			return r
		}
	}
	return noLeader
}
