package condition

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/kafkahash"
)

// Errors an action or a condition can wrap.
var (
	// ErrUnknownNode: the node ID is not part of the playground.
	ErrUnknownNode = errors.New("unknown node")
	// ErrNoLeader: the action or reference needs a leader and there is none.
	ErrNoLeader = errors.New("no leader")
	// ErrNoBaseline: old-leader or baseline was used before any kill, stop,
	// isolate or resign.
	ErrNoBaseline = errors.New("no baseline yet")
	// ErrNoFollower: follower was used while no voter follows the leader.
	ErrNoFollower = errors.New("no follower")
	// ErrNoPartition: leader-of or follower-of named a partition the
	// committed metadata does not hold.
	ErrNoPartition = errors.New("no such partition")
	// ErrUnknownTopic: a condition named a topic, or a partition of one,
	// that the committed metadata does not hold while a leader serves
	// it. A wait may see it created; to expect it is a mistake.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrNoController: a reference to the controller found none.
	ErrNoController = errors.New("no active controller")
	// ErrUnknownPartition: as ErrUnknownTopic, for a partition number
	// past the topic's.
	ErrUnknownPartition = errors.New("unknown partition")
	// ErrNoCoordinator: coordinator-of named a group whose partition of
	// __consumer_offsets has no leader, or does not exist yet.
	ErrNoCoordinator = errors.New("no coordinator")
)

// Names of the symbolic node references.
const (
	RefLeader    = "leader"
	RefOldLeader = "old-leader"
	RefFollower  = "follower"
	RefTarget    = "target"
	// RefController is the active controller: in zk mode the broker
	// holding /controller, in KRaft mode the quorum's leader.
	RefController = "controller"
	// RefZooKeeper is zk mode's ZooKeeper server, for kill, stop and
	// start, and partition and heal between it and a broker; it is not a
	// node of the view.
	RefZooKeeper = "zk"
	// RefLeaderOf and RefFollowerOf name a partition's replicas, written
	// leader-of:TOPIC-P and follower-of:TOPIC-P.
	RefLeaderOf   = "leader-of"
	RefFollowerOf = "follower-of"
	// RefCoordinatorOf names a consumer group's coordinator, written
	// coordinator-of:GROUP.
	RefCoordinatorOf = "coordinator-of"
)

// RefsHelp says what the symbolic references mean, for help texts.
const RefsHelp = `leader (the current leader), controller (the active controller: the
leader, or in zk mode the broker holding /controller), zk (zk mode's
ZooKeeper, for kill, stop and start, and partition or heal BROKER zk), follower (the running follower of the
current leader with the lowest id), old-leader (the leader before the last
kill, stop, isolate, resign, wipe, disk or mark), target (the node that action
targeted), leader-of:TOPIC-P (the broker leading that partition) or
follower-of:TOPIC-P (its in-sync follower with the lowest id; while it has
no leader, its replica with the lowest id outside the ISR and the ELR) or
coordinator-of:GROUP (the broker FindCoordinator names for the consumer
group: the leader of its partition of __consumer_offsets)`

// NodeRef names a node as users write it: a node ID, "leader" (the current
// leader), "follower" (the running follower of the current leader with
// the lowest ID), "old-leader" (the leader recorded in the baseline, i.e.
// just before the last kill, stop, isolate, resign, wipe, disk or mark) or "target"
// (the node that action targeted). The zero NodeRef names no node.
type NodeRef struct {
	name  string // RefLeader, RefOldLeader, RefFollower, RefTarget, RefLeaderOf, RefFollowerOf, RefCoordinatorOf or "" for an ID
	id    int32
	tp    view.TopicPartition // of RefLeaderOf and RefFollowerOf
	group string              // of RefCoordinatorOf
	set   bool
}

// NodeID returns a reference to a node ID.
func NodeID(id int32) NodeRef { return NodeRef{id: id, set: true} }

// LeaderRef returns a reference to the current leader.
func LeaderRef() NodeRef { return NodeRef{name: RefLeader, set: true} }

// ParseNodeRef parses a node ID, "leader", "follower", "old-leader",
// "target", "leader-of:TOPIC-P", "follower-of:TOPIC-P" or
// "coordinator-of:GROUP".
func ParseNodeRef(s string) (NodeRef, error) {
	switch name := strings.ToLower(s); name {
	case RefLeader, RefOldLeader, RefFollower, RefTarget, RefController, RefZooKeeper:
		return NodeRef{name: name, set: true}, nil
	}
	if name, part, ok := strings.Cut(s, ":"); ok {
		name = strings.ToLower(name)
		if name == RefCoordinatorOf {
			if part == "" {
				return NodeRef{}, fmt.Errorf("bad node %q: want %s:GROUP, with the consumer group's id", s, RefCoordinatorOf)
			}
			return NodeRef{name: name, group: part, set: true}, nil
		}
		if name != RefLeaderOf && name != RefFollowerOf {
			return NodeRef{}, fmt.Errorf("bad node %q: want %s:TOPIC-P, %s:TOPIC-P or %s:GROUP", s, RefLeaderOf, RefFollowerOf, RefCoordinatorOf)
		}
		tp, err := view.ParseTopicPartition(part)
		if err != nil {
			return NodeRef{}, fmt.Errorf("bad node %q: %w", s, err)
		}
		return NodeRef{name: name, tp: tp, set: true}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return NodeRef{}, fmt.Errorf("bad node %q: want a node ID (controllers 1, 2, 3…; brokers 101, 102…), %s, %s, %s, %s, %s, %s:TOPIC-P, %s:TOPIC-P or %s:GROUP",
			s, RefLeader, RefController, RefFollower, RefOldLeader, RefTarget, RefLeaderOf, RefFollowerOf, RefCoordinatorOf)
	}
	return NodeID(int32(n)), nil
}

// IsZero reports whether r names no node.
func (r NodeRef) IsZero() bool { return !r.set }

// IsLeader reports whether r is the "leader" reference.
func (r NodeRef) IsLeader() bool { return r.name == RefLeader }

// IsZooKeeper reports whether r is the "zk" reference: zk mode's
// ZooKeeper server, which the playground acts on itself.
func (r NodeRef) IsZooKeeper() bool { return r.name == RefZooKeeper }

// IsFollower reports whether r is the "follower" reference.
func (r NodeRef) IsFollower() bool { return r.name == RefFollower }

// ID returns the node ID r names literally; ok is false for the zero
// NodeRef and the symbolic references, which only a view resolves.
func (r NodeRef) ID() (id int32, ok bool) { return r.id, r.set && r.name == "" }

// String returns r as users write it.
func (r NodeRef) String() string {
	switch {
	case !r.set:
		return ""
	case r.name == RefLeaderOf || r.name == RefFollowerOf:
		return r.name + ":" + r.tp.String()
	case r.name == RefCoordinatorOf:
		return r.name + ":" + r.group
	case r.name != "":
		return r.name
	}
	return strconv.Itoa(int(r.id))
}

// MarshalText encodes r as users write it.
func (r NodeRef) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses r; empty text is the zero NodeRef.
func (r *NodeRef) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*r = NodeRef{}
		return nil
	}
	p, err := ParseNodeRef(string(b))
	if err != nil {
		return err
	}
	*r = p
	return nil
}

// Resolve returns the ID r names in v, checking that the node exists.
func (r NodeRef) Resolve(v *view.View) (int32, error) {
	var id int32
	switch {
	case !r.set:
		return 0, errors.New("no node given")
	case r.name == RefLeader:
		if v.LeaderID == view.NoLeader {
			return 0, fmt.Errorf("%w right now (an election may be in progress)", ErrNoLeader)
		}
		id = v.LeaderID
	case r.name == RefZooKeeper:
		return 0, fmt.Errorf("zk is zk mode's ZooKeeper, not a node: only kill, stop, start, and partition or heal BROKER zk take it")
	case r.name == RefController && v.ZooKeeper != nil:
		if v.ZooKeeper.ControllerID == view.NoLeader {
			return 0, fmt.Errorf("%w right now: no broker holds /controller (ZooKeeper may still be expiring the last one's session)", ErrNoController)
		}
		id = v.ZooKeeper.ControllerID
	case r.name == RefController:
		if v.LeaderID == view.NoLeader {
			return 0, fmt.Errorf("%w right now (an election may be in progress)", ErrNoController)
		}
		id = v.LeaderID
	case r.name == RefFollower:
		f, err := follower(v)
		if err != nil {
			return 0, err
		}
		id = f
	case r.name == RefTarget:
		if v.Baseline == nil {
			return 0, fmt.Errorf("%s: %w: there was no kill, stop, isolate, resign, wipe, disk or mark yet", RefTarget, ErrNoBaseline)
		}
		id = v.Baseline.NodeID
		if id == 0 {
			return 0, fmt.Errorf("%s: %w: the last %s acted on no node", RefTarget, ErrNoBaseline, v.Baseline.Action)
		}
	case r.name == RefOldLeader:
		if v.Baseline == nil {
			return 0, fmt.Errorf("%s: %w: there was no kill, stop, isolate, resign, wipe, disk or mark yet", RefOldLeader, ErrNoBaseline)
		}
		if v.Baseline.LeaderID == view.NoLeader {
			return 0, fmt.Errorf("%s: %w before the last %s", RefOldLeader, ErrNoLeader, v.Baseline.Action)
		}
		id = v.Baseline.LeaderID
	case r.name == RefLeaderOf || r.name == RefFollowerOf:
		p, ok := v.Partition(r.tp.Topic, r.tp.Partition)
		if !ok {
			return 0, fmt.Errorf("%s: %w %s in the committed metadata", r, ErrNoPartition, r.tp)
		}
		if r.name == RefLeaderOf {
			if p.Leader == view.NoLeader {
				return 0, fmt.Errorf("%s: %w: %s has no leader right now", r, ErrNoLeader, r.tp)
			}
			id = p.Leader
			break
		}
		if id = partitionFollower(p); id < 0 {
			return 0, fmt.Errorf("%s: %w: %s has no replica besides its leader %d", r, ErrNoFollower, r.tp, p.Leader)
		}
	case r.name == RefCoordinatorOf:
		c, err := coordinator(v, r.group)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", r, err)
		}
		id = c
	default:
		id = r.id
	}
	if _, ok := v.Node(id); !ok {
		return 0, unknownNodeError(v, id)
	}
	return id, nil
}

// partitionFollower is the in-sync replica of p with the lowest ID that
// does not lead it, else the lowest that does not lead it; while it has no
// leader, the lowest outside its ISR (the one an unclean election would
// need), else the lowest. -1 if none.
func partitionFollower(p *view.Partition) int32 {
	lowest := func(ok func(int32) bool) int32 {
		id := int32(-1)
		for _, b := range p.Replicas {
			if ok(b) && (id < 0 || b < id) {
				id = b
			}
		}
		return id
	}
	if p.Leader != view.NoLeader {
		if id := lowest(func(b int32) bool { return b != p.Leader && slices.Contains(p.Isr, b) }); id >= 0 {
			return id
		}
		return lowest(func(b int32) bool { return b != p.Leader })
	}
	// Leaderless: the replica only an unclean election could elect,
	// outside the ISR and the eligible leader replicas.
	if id := lowest(func(b int32) bool { return !slices.Contains(p.Isr, b) && !slices.Contains(p.Elr, b) }); id >= 0 {
		return id
	}
	return lowest(func(int32) bool { return true })
}

// coordinator is the broker FindCoordinator names for group: the leader
// of the group's partition of __consumer_offsets, whether or not the
// group has members yet.
func coordinator(v *view.View, group string) (int32, error) {
	t, ok := v.Topic(view.OffsetsTopic)
	if !ok || len(t.Partitions) == 0 {
		return 0, fmt.Errorf("%w: %s does not exist yet (the first FindCoordinator of a group creates it)", ErrNoCoordinator, view.OffsetsTopic)
	}
	p := kafkahash.GroupPartition(group, int32(len(t.Partitions)))
	part, ok := v.Partition(view.OffsetsTopic, p)
	if !ok {
		return 0, fmt.Errorf("%w: %s-%d is not in the committed metadata", ErrNoCoordinator, view.OffsetsTopic, p)
	}
	if part.Leader == view.NoLeader {
		return 0, fmt.Errorf("%w: %s-%d, the group's partition, has no leader right now", ErrNoCoordinator, view.OffsetsTopic, p)
	}
	return part.Leader, nil
}

// follower is the running voter with the lowest ID that follows the
// current leader in its epoch.
func follower(v *view.View) (int32, error) {
	if v.LeaderID == view.NoLeader {
		return 0, fmt.Errorf("%s: %w right now, so no follower of one (an election may be in progress)", RefFollower, ErrNoLeader)
	}
	best := int32(-1)
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Kind == view.KindController && n.State == view.StateRunning && n.Role == view.RoleFollower &&
			n.LeaderID == v.LeaderID && n.Epoch == v.LeaderEpoch && (best < 0 || n.ID < best) {
			best = n.ID
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("%w: no running voter follows leader %d in epoch %d", ErrNoFollower, v.LeaderID, v.LeaderEpoch)
	}
	return best, nil
}

func unknownNodeError(v *view.View, id int32) error {
	ids := make([]string, len(v.Nodes))
	for i, n := range v.Nodes {
		ids[i] = strconv.Itoa(int(n.ID))
	}
	return fmt.Errorf("%w %d (nodes: %s)", ErrUnknownNode, id, strings.Join(ids, ", "))
}

// ParseBrokerRef reads a reference to a broker: its node ID, target (the node the last
// kill, stop, isolate or wipe acted on), leader-of:T-P, follower-of:T-P
// or coordinator-of:GROUP. leader, follower and old-leader name
// controllers of the metadata quorum, not brokers.
func ParseBrokerRef(s string) (NodeRef, error) {
	lower := strings.ToLower(s)
	symbolic := lower == RefTarget || strings.HasPrefix(lower, RefLeaderOf+":") || strings.HasPrefix(lower, RefFollowerOf+":") || strings.HasPrefix(lower, RefCoordinatorOf+":")
	if _, err := strconv.ParseInt(s, 10, 32); err != nil && !symbolic {
		return NodeRef{}, fmt.Errorf("bad broker %q: want a broker's node ID, e.g. 102, %s, %s:TOPIC-P, %s:TOPIC-P or %s:GROUP", s, RefTarget, RefLeaderOf, RefFollowerOf, RefCoordinatorOf)
	}
	return ParseNodeRef(s)
}
