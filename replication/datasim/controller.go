package datasim

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kerr"
)

// controller models the active KRaft controller for the topic's
// partitions: broker registrations, heartbeats and fencing after the
// session timeout, leader elections from the ISR (never unclean), and
// AlterPartition answered against the leader and partition epochs. It is
// a model, not the real QuorumController: it never fails, and what it
// decides reaches the brokers as metadata over the simulated network.
type controller struct {
	s     *Sim
	parts []*registration

	brokerEpoch     map[int32]int64
	registered      map[int32]int // the incarnation each broker registered
	fenced          map[int32]bool
	lastHeartbeat   map[int32]time.Time
	nextBrokerEpoch int64
	version         int64

	elections, isrChanges int
}

// registration is one partition as the controller holds it (Kafka's
// PartitionRegistration).
type registration struct {
	leader      int32
	leaderEpoch int32
	partEpoch   int32
	replicas    []int32
	isr         []int32
}

func (r registration) clone() registration {
	r.replicas, r.isr = slices.Clone(r.replicas), slices.Clone(r.isr)
	return r
}

// metadata is what a broker learns of the controller's state: the
// partitions' registrations and the brokers' epochs and fencing.
type metadata struct {
	version     int64
	parts       []registration
	brokerEpoch map[int32]int64
	fenced      map[int32]bool
}

func newController(s *Sim) *controller {
	c := &controller{s: s, brokerEpoch: map[int32]int64{}, registered: map[int32]int{}, fenced: map[int32]bool{},
		lastHeartbeat: map[int32]time.Time{}, nextBrokerEpoch: 100}
	for i := range s.partitions {
		// Each partition prefers another leader.
		n := int(i) % len(brokerIDs)
		replicas := slices.Concat(brokerIDs[n:], brokerIDs[:n])
		c.parts = append(c.parts, &registration{leader: -1, leaderEpoch: -1, partEpoch: -1, replicas: replicas, isr: slices.Clone(replicas)})
	}
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
	md := metadata{version: c.version, brokerEpoch: maps.Clone(c.brokerEpoch), fenced: maps.Clone(c.fenced)}
	for _, r := range c.parts {
		md.parts = append(md.parts, r.clone())
	}
	return md
}

// changed publishes a new metadata version to every broker.
func (c *controller) changed(why string) {
	c.version++
	line := "controller v" + strconv.FormatInt(c.version, 10) + " (" + why + "):"
	for i, r := range c.parts {
		line += " p" + itoa(int32(i)) + " leader " + itoa(r.leader) + " epoch " + itoa(r.leaderEpoch) + "/" + itoa(r.partEpoch) + " isr " + ids(r.isr) + ";"
	}
	c.s.record("%s fenced %v", line, c.fencedList())
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

// heartbeat keeps a broker's session, and unfences it: it then leads the
// partitions left leaderless whose ISR it is in.
func (c *controller) heartbeat(id int32, epoch int64) {
	if c.brokerEpoch[id] != epoch {
		return
	}
	c.lastHeartbeat[id] = c.s.now
	if !c.fenced[id] {
		return
	}
	c.fenced[id] = false
	for _, r := range c.parts {
		if r.leader < 0 && slices.Contains(r.isr, id) {
			c.elect(r, id)
		}
	}
	c.changed("broker " + itoa(id) + " unfenced")
}

func (c *controller) sessionCheck() {
	for _, id := range brokerIDs {
		if !c.fenced[id] && c.s.now.Sub(c.lastHeartbeat[id]) > sessionTimeout {
			c.fence(id, "session timed out")
		}
	}
	c.s.after(100*time.Millisecond, "controller session check", c.sessionCheck)
}

// fence takes a broker out of every ISR (unless it is the last member)
// and out of leadership, as Kafka's controller does for a fenced broker.
func (c *controller) fence(id int32, why string) {
	c.fenced[id] = true
	for _, r := range c.parts {
		if len(r.isr) > 1 && slices.Contains(r.isr, id) {
			r.isr = slices.DeleteFunc(r.isr, func(m int32) bool { return m == id })
			c.isrChanges++
			if r.leader != id {
				r.partEpoch++
			}
		}
		if r.leader == id {
			c.elect(r, c.pick(r, -1))
		}
	}
	c.changed("broker " + itoa(id) + " fenced: " + why)
}

// pick is an unfenced ISR member other than not, in replica order, or -1.
func (c *controller) pick(r *registration, not int32) int32 {
	for _, id := range r.replicas {
		if id != not && !c.fenced[id] && slices.Contains(r.isr, id) {
			return id
		}
	}
	return -1
}

// elect makes id (-1: nobody) the partition's leader in a new leader epoch.
func (c *controller) elect(r *registration, id int32) {
	r.leader = id
	r.leaderEpoch++
	r.partEpoch++
	c.elections++
}

// moveLeader is a preferred-leader or reassignment style leader change of
// partition idx to another unfenced ISR member, if there is one.
func (c *controller) moveLeader(idx int32) {
	r := c.parts[idx]
	var cands []int32
	for _, id := range r.isr {
		if id != r.leader && !c.fenced[id] {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 || r.leader < 0 {
		return
	}
	c.elect(r, cands[c.s.rng.IntN(len(cands))])
	c.changed("p" + itoa(idx) + " leader moved")
}

// alterPartition answers a leader's ISR proposal for partition idx
// (Kafka's ReplicationControlManager.alterPartition): refused with the
// leader epoch fenced, the partition epoch stale, or a new member
// ineligible; else the ISR changes in a new partition epoch.
func (c *controller) alterPartition(from, idx int32, prop partition.Proposal) (isr []int32, partEpoch int32, err error) {
	r := c.parts[idx]
	switch {
	case from != r.leader || prop.LeaderEpoch != r.leaderEpoch:
		return nil, 0, kerr.FencedLeaderEpoch
	case prop.PartitionEpoch != r.partEpoch:
		return nil, 0, kerr.InvalidUpdateVersion
	}
	for i, id := range prop.ISR {
		if slices.Contains(r.isr, id) {
			continue
		}
		if c.fenced[id] || (i < len(prop.BrokerEpochs) && prop.BrokerEpochs[i] >= 0 && prop.BrokerEpochs[i] != c.brokerEpoch[id]) {
			return nil, 0, kerr.IneligibleReplica
		}
	}
	if !slices.Contains(prop.ISR, r.leader) {
		return nil, 0, kerr.InvalidRequest
	}
	r.isr = slices.Clone(prop.ISR)
	r.partEpoch++
	c.isrChanges++
	c.changed("p" + itoa(idx) + " " + prop.Kind.String() + " from leader " + itoa(from))
	return slices.Clone(r.isr), r.partEpoch, nil
}

func itoa(id int32) string { return strconv.Itoa(int(id)) }

func ids(s []int32) string {
	out := "["
	for i, id := range s {
		if i > 0 {
			out += " "
		}
		out += itoa(id)
	}
	return out + "]"
}
