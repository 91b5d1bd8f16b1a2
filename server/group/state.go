package group

// State is a classic group's state (Kafka's ClassicGroupState).
type State int8

// The states of a classic group.
const (
	// Empty has no members; it may still hold committed offsets.
	Empty State = iota
	// PreparingRebalance waits for the members to join (again).
	PreparingRebalance
	// CompletingRebalance waits for the leader's assignment (SyncGroup).
	CompletingRebalance
	// Stable has members with their assignments.
	Stable
	// Dead has been deleted, or unloaded.
	Dead
)

// String is the state's name as Kafka's DescribeGroups and ListGroups
// give it.
func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	case Dead:
		return "Dead"
	}
	return "Unknown"
}

// ConsumerProtocolType is the protocol type of Kafka's consumers, whose
// subscriptions and assignments the coordinator can read.
const ConsumerProtocolType = "consumer"
