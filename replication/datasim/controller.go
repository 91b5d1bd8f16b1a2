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
// Timing of the modelled controller and of the brokers' side of it.
const (
	sessionTimeout    = 1500 * time.Millisecond
	heartbeatInterval = 300 * time.Millisecond
)

type controller struct {
	s     *Sim
	env   Env
	ids   []int32
	parts []*Registration

	brokerEpoch     map[int32]int64
	registered      map[int32]int // the incarnation each broker registered
	fenced          map[int32]bool
	lastHeartbeat   map[int32]time.Time
	nextBrokerEpoch int64
	version         int64

	elections, isrChanges int
}

func newController(env Env, cfg Config) *controller {
	c := &controller{env: env, ids: cfg.Brokers, brokerEpoch: map[int32]int64{}, registered: map[int32]int{}, fenced: map[int32]bool{},
		lastHeartbeat: map[int32]time.Time{}, nextBrokerEpoch: 100}
	for i := range cfg.Partitions {
		// Each partition prefers another leader.
		n := int(i) % len(c.ids)
		replicas := slices.Concat(c.ids[n:], c.ids[:n])
		c.parts = append(c.parts, &Registration{Leader: -1, LeaderEpoch: -1, PartitionEpoch: -1, Replicas: replicas, ISR: slices.Clone(replicas)})
	}
	for _, id := range c.ids {
		c.fenced[id] = true
	}
	return c
}

// Partition implements Controller.
func (c *controller) Partition(idx int32) Registration { return c.parts[idx].clone() }

// begin starts the session checks.
func (c *controller) begin() {
	c.env.After(100*time.Millisecond, "controller session check", c.sessionCheck)
}

func (c *controller) snapshot() Metadata {
	md := Metadata{Version: c.version, BrokerEpochs: maps.Clone(c.brokerEpoch), Fenced: maps.Clone(c.fenced)}
	for _, r := range c.parts {
		md.Partitions = append(md.Partitions, r.clone())
	}
	return md
}

// changed publishes a new metadata version to every broker.
func (c *controller) changed(why string) {
	c.version++
	line := "controller v" + strconv.FormatInt(c.version, 10) + " (" + why + "):"
	for i, r := range c.parts {
		line += " p" + itoa(int32(i)) + " leader " + itoa(r.Leader) + " epoch " + itoa(r.LeaderEpoch) + "/" + itoa(r.PartitionEpoch) + " isr " + ids(r.ISR) + ";"
	}
	c.s.record("%s fenced %v", line, c.fencedList())
	md := c.snapshot()
	for _, id := range c.ids {
		c.s.send(controllerID, id, "metadata", func() { c.s.brokers[id].applyMetadata(md) })
	}
}

func (c *controller) fencedList() []int32 {
	var out []int32
	for _, id := range c.ids {
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
func (c *controller) registerBroker(id int32, incarnation int) int64 {
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
	c.lastHeartbeat[id] = c.env.Now()
	if !c.fenced[id] {
		return
	}
	c.fenced[id] = false
	for _, r := range c.parts {
		if r.Leader < 0 && slices.Contains(r.ISR, id) {
			c.elect(r, id)
		}
	}
	c.changed("broker " + itoa(id) + " unfenced")
}

func (c *controller) sessionCheck() {
	for _, id := range c.ids {
		if !c.fenced[id] && c.env.Now().Sub(c.lastHeartbeat[id]) > sessionTimeout {
			c.fence(id, "session timed out")
		}
	}
	c.env.After(100*time.Millisecond, "controller session check", c.sessionCheck)
}

// fence takes a broker out of every ISR (unless it is the last member)
// and out of leadership, as Kafka's controller does for a fenced broker.
func (c *controller) fence(id int32, why string) {
	c.fenced[id] = true
	for _, r := range c.parts {
		if len(r.ISR) > 1 && slices.Contains(r.ISR, id) {
			r.ISR = slices.DeleteFunc(r.ISR, func(m int32) bool { return m == id })
			c.isrChanges++
			if r.Leader != id {
				r.PartitionEpoch++
			}
		}
		if r.Leader == id {
			c.elect(r, c.pick(r, -1))
		}
	}
	c.changed("broker " + itoa(id) + " fenced: " + why)
}

// pick is an unfenced ISR member other than not, in replica order, or -1.
func (c *controller) pick(r *Registration, not int32) int32 {
	for _, id := range r.Replicas {
		if id != not && !c.fenced[id] && slices.Contains(r.ISR, id) {
			return id
		}
	}
	return -1
}

// elect makes id (-1: nobody) the partition's leader in a new leader epoch.
func (c *controller) elect(r *Registration, id int32) {
	r.Leader = id
	r.LeaderEpoch++
	r.PartitionEpoch++
	c.elections++
}

// moveLeader is a preferred-leader or reassignment style leader change of
// partition idx to another unfenced ISR member, if there is one.
func (c *controller) moveLeader(idx int32) {
	r := c.parts[idx]
	var cands []int32
	for _, id := range r.ISR {
		if id != r.Leader && !c.fenced[id] {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 || r.Leader < 0 {
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
	case from != r.Leader || prop.LeaderEpoch != r.LeaderEpoch:
		return nil, 0, kerr.FencedLeaderEpoch
	case prop.PartitionEpoch != r.PartitionEpoch:
		return nil, 0, kerr.InvalidUpdateVersion
	}
	for i, id := range prop.ISR {
		if slices.Contains(r.ISR, id) {
			continue
		}
		if c.fenced[id] || (i < len(prop.BrokerEpochs) && prop.BrokerEpochs[i] >= 0 && prop.BrokerEpochs[i] != c.brokerEpoch[id]) {
			return nil, 0, kerr.IneligibleReplica
		}
	}
	if !slices.Contains(prop.ISR, r.Leader) {
		return nil, 0, kerr.InvalidRequest
	}
	r.ISR = slices.Clone(prop.ISR)
	r.PartitionEpoch++
	c.isrChanges++
	c.changed("p" + itoa(idx) + " " + prop.Kind.String() + " from leader " + itoa(from))
	return slices.Clone(r.ISR), r.PartitionEpoch, nil
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

// AlterPartition implements Controller: the proposal travels to the
// controller and its answer back over the network.
func (c *controller) AlterPartition(from, idx int32, prop partition.Proposal, answer func(isr []int32, partitionEpoch int32, err error)) {
	c.s.send(from, controllerID, "alter partition", func() {
		isr, pe, err := c.alterPartition(from, idx, prop)
		c.s.send(controllerID, from, "alter partition answer", func() { answer(isr, pe, err) })
	})
}

// started begins a broker incarnation's side of the model: it registers,
// heartbeats, and polls the metadata now and then (besides the versions
// the controller sends on every change).
func (c *controller) started(b *broker) {
	c.register(b)
	b.every(heartbeatInterval, "heartbeat", func() {
		if b.epoch >= 0 {
			epoch := b.epoch
			c.s.send(b.id, controllerID, "heartbeat", func() { c.heartbeat(b.id, epoch) })
		}
	})
	b.every(250*time.Millisecond, "metadata poll", func() {
		c.s.send(b.id, controllerID, "metadata poll", func() {
			md := c.snapshot()
			c.s.send(controllerID, b.id, "metadata", func() { b.applyMetadata(md) })
		})
	})
}

// register sends the broker's registration until an answer lands.
func (c *controller) register(b *broker) {
	inc := b.incarnation
	c.s.send(b.id, controllerID, "register", func() {
		epoch := c.registerBroker(b.id, inc)
		c.s.send(controllerID, b.id, "registered", func() {
			if b.alive(inc) && b.epoch < 0 {
				b.epoch = epoch
				c.s.record("broker %d registered with epoch %d", b.id, epoch)
			}
		})
	})
	b.later(time.Second, "register retry", func() {
		if b.epoch < 0 {
			c.register(b)
		}
	})
}
