package datasim

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kerr"
)

// controller models the active KRaft controller for the one partition:
// broker registrations, heartbeats and fencing after the session timeout,
// leader elections from the ISR (never unclean), and AlterPartition
// answered against the leader and partition epochs. It is a model, not
// the real QuorumController: it never fails, and what it decides reaches
// the brokers as metadata over the simulated network.
type controller struct {
	s           *Sim
	leader      int32
	leaderEpoch int32
	partEpoch   int32
	replicas    []int32
	isr         []int32

	brokerEpoch     map[int32]int64
	registered      map[int32]int // the incarnation each broker registered
	fenced          map[int32]bool
	lastHeartbeat   map[int32]time.Time
	nextBrokerEpoch int64
	version         int64

	elections, isrChanges int
	hwmSeen               int64
}

// metadata is what a broker learns of the controller's state: the
// partition's registration and the brokers' epochs and fencing.
type metadata struct {
	version     int64
	leader      int32
	leaderEpoch int32
	partEpoch   int32
	replicas    []int32
	isr         []int32
	brokerEpoch map[int32]int64
	fenced      map[int32]bool
}

func newController(s *Sim) *controller {
	c := &controller{s: s, leader: -1, leaderEpoch: -1, partEpoch: -1, replicas: slices.Clone(brokerIDs), isr: slices.Clone(brokerIDs),
		brokerEpoch: map[int32]int64{}, registered: map[int32]int{}, fenced: map[int32]bool{}, lastHeartbeat: map[int32]time.Time{}, nextBrokerEpoch: 100}
	for _, id := range brokerIDs {
		c.fenced[id] = true
	}
	return c
}

// begin starts the session checks.
func (c *controller) begin() {
	c.s.after(100*time.Millisecond, "controller session check", c.sessionCheck)
}

func (c *controller) snapshot() metadata {
	return metadata{version: c.version, leader: c.leader, leaderEpoch: c.leaderEpoch, partEpoch: c.partEpoch,
		replicas: slices.Clone(c.replicas), isr: slices.Clone(c.isr), brokerEpoch: maps.Clone(c.brokerEpoch), fenced: maps.Clone(c.fenced)}
}

// changed publishes a new metadata version to every broker.
func (c *controller) changed(why string) {
	c.version++
	c.s.record("controller v%d (%s): leader %d epoch %d partition epoch %d isr %v fenced %v",
		c.version, why, c.leader, c.leaderEpoch, c.partEpoch, c.isr, c.fencedList())
	md := c.snapshot()
	for _, id := range brokerIDs {
		c.s.net.send(controllerID, id, "metadata", func() { c.s.brokers[id].applyMetadata(md) })
	}
}

func (c *controller) fencedList() []int32 {
	var out []int32
	for _, id := range brokerIDs {
		if c.fenced[id] {
			out = append(out, id)
		}
	}
	return out
}

// register gives a starting broker a new broker epoch; it stays fenced
// until it heartbeats with it. A retried registration of the same
// incarnation gets the epoch it already has, as Kafka's controller keys
// registrations by incarnation id.
func (c *controller) register(id int32, incarnation int) int64 {
	if c.registered[id] == incarnation {
		return c.brokerEpoch[id]
	}
	c.registered[id] = incarnation
	c.nextBrokerEpoch++
	c.brokerEpoch[id] = c.nextBrokerEpoch
	if !c.fenced[id] {
		c.fence(id, "registered again")
	} else {
		c.changed("broker " + itoa(id) + " registered")
	}
	return c.nextBrokerEpoch
}

// heartbeat keeps a broker's session, and unfences it.
func (c *controller) heartbeat(id int32, epoch int64) {
	if c.brokerEpoch[id] != epoch {
		return
	}
	c.lastHeartbeat[id] = c.s.now
	if c.fenced[id] {
		c.fenced[id] = false
		if c.leader < 0 && slices.Contains(c.isr, id) {
			c.elect(id, "unfenced into a leaderless partition")
			return
		}
		c.changed("broker " + itoa(id) + " unfenced")
	}
}

func (c *controller) sessionCheck() {
	for _, id := range brokerIDs {
		if !c.fenced[id] && c.s.now.Sub(c.lastHeartbeat[id]) > sessionTimeout {
			c.fence(id, "session timed out")
		}
	}
	c.s.after(100*time.Millisecond, "controller session check", c.sessionCheck)
}

// fence takes a broker out of the ISR (unless it is the last member) and
// out of leadership, as Kafka's controller does for a fenced broker.
func (c *controller) fence(id int32, why string) {
	c.fenced[id] = true
	if len(c.isr) > 1 && slices.Contains(c.isr, id) {
		c.isr = slices.DeleteFunc(c.isr, func(r int32) bool { return r == id })
		c.isrChanges++
		if c.leader != id {
			c.partEpoch++
		}
	}
	if c.leader == id {
		c.elect(c.pick(-1), "broker "+itoa(id)+" fenced: "+why)
		return
	}
	c.changed("broker " + itoa(id) + " fenced: " + why)
}

// pick is an unfenced ISR member other than not, in replica order, or -1.
func (c *controller) pick(not int32) int32 {
	for _, id := range c.replicas {
		if id != not && !c.fenced[id] && slices.Contains(c.isr, id) {
			return id
		}
	}
	return -1
}

// elect makes id (-1: nobody) the leader in a new leader epoch.
func (c *controller) elect(id int32, why string) {
	c.leader = id
	c.leaderEpoch++
	c.partEpoch++
	c.elections++
	c.changed("election: " + why)
}

// moveLeader is a preferred-leader or reassignment style leader change to
// another unfenced ISR member, if there is one.
func (c *controller) moveLeader() {
	var cands []int32
	for _, id := range c.isr {
		if id != c.leader && !c.fenced[id] {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 || c.leader < 0 {
		return
	}
	c.elect(cands[c.s.rng.IntN(len(cands))], "leader moved")
}

// alterPartition answers a leader's ISR proposal (Kafka's
// ReplicationControlManager.alterPartition): refused with the leader
// epoch fenced, the partition epoch stale, or a new member ineligible;
// else the ISR changes in a new partition epoch.
func (c *controller) alterPartition(from int32, prop partition.Proposal) (isr []int32, partEpoch int32, err error) {
	switch {
	case from != c.leader || prop.LeaderEpoch != c.leaderEpoch:
		return nil, 0, kerr.FencedLeaderEpoch
	case prop.PartitionEpoch != c.partEpoch:
		return nil, 0, kerr.InvalidUpdateVersion
	}
	for i, id := range prop.ISR {
		if slices.Contains(c.isr, id) {
			continue
		}
		if c.fenced[id] || (i < len(prop.BrokerEpochs) && prop.BrokerEpochs[i] >= 0 && prop.BrokerEpochs[i] != c.brokerEpoch[id]) {
			return nil, 0, kerr.IneligibleReplica
		}
	}
	if !slices.Contains(prop.ISR, c.leader) {
		return nil, 0, kerr.InvalidRequest
	}
	c.isr = slices.Clone(prop.ISR)
	c.partEpoch++
	c.isrChanges++
	c.changed(prop.Kind.String() + " from leader " + itoa(from))
	return slices.Clone(c.isr), c.partEpoch, nil
}

func (c *controller) lastHWM() int64 { return c.hwmSeen }

func itoa(id int32) string { return strconv.Itoa(int(id)) }
