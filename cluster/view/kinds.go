package view

// NoLeader is the leader ID (and epoch) when none is known, as in Kafka.
const NoLeader = -1

// Kind is what a node is in the cluster.
type Kind string

// Node kinds.
const (
	KindController Kind = "controller"
	KindBroker     Kind = "broker"
)

// State is what the playground did to a node, as opposed to its Role,
// which is what the quorum made of it.
type State string

// Node states.
const (
	// StateRunning is a node that is up; its links may still be faulty.
	StateRunning State = "running"
	// StateKilled is a node stopped abruptly by kill.
	StateKilled State = "killed"
	// StateStopped is a node shut down gracefully by stop.
	StateStopped State = "stopped"
	// StateIsolated is a running node whose every link to and from every
	// other node is down.
	StateIsolated State = "isolated"
	// StateFailed is a node that stopped on an error it cannot go on from,
	// or whose start was refused; Node.Error says why.
	StateFailed State = "failed"
	// StateUnreachable is a node of a real cluster kraftlab is attached
	// to that did not answer its last poll: down, or cut off from
	// kraftlab, which cannot tell which.
	StateUnreachable State = "unreachable"
	// StateUnknown is a node of such a cluster that kraftlab could not
	// ask: the wire gave no address for it.
	StateUnknown State = "unknown"
)

// States lists the node states.
func States() []State {
	return []State{StateRunning, StateKilled, StateStopped, StateIsolated, StateFailed, StateUnreachable, StateUnknown}
}

// Role is a node's place in the metadata quorum, named like Kafka's
// QuorumState classes (EpochState kinds).
type Role string

// Roles.
const (
	RoleLeader      Role = "Leader"
	RoleFollower    Role = "Follower"
	RoleCandidate   Role = "Candidate"
	RoleProspective Role = "Prospective"
	RoleUnattached  Role = "Unattached"
	RoleResigned    Role = "Resigned"
	// RoleObserver is a broker following the leader of the metadata quorum,
	// or a controller that is no voter of a dynamic one; an observer that
	// knows no leader is Unattached.
	RoleObserver Role = "Observer"
	// RoleZkController is, in the ZooKeeper era, the broker that holds
	// /controller; RoleBroker is any other running broker of that era.
	// Neither has a metadata quorum.
	RoleZkController Role = "Controller"
	RoleBroker       Role = "Broker"
)

// Roles lists the roles: the quorum's, then the ZooKeeper era's.
func Roles() []Role {
	return []Role{RoleLeader, RoleFollower, RoleCandidate, RoleProspective, RoleUnattached, RoleResigned, RoleObserver, RoleZkController, RoleBroker}
}

// ReplicaStatus is a replica's place as kafka-metadata-quorum describe
// --replication prints it.
type ReplicaStatus string

// Replica statuses.
const (
	StatusLeader   ReplicaStatus = "Leader"
	StatusFollower ReplicaStatus = "Follower"
	StatusObserver ReplicaStatus = "Observer"
)

// Names spells a list of kinds, states, roles or statuses as strings.
func Names[T ~string](list []T) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = string(v)
	}
	return out
}
