package view

// OffsetsTopic is the internal topic that holds the consumer groups'
// committed offsets and metadata.
const OffsetsTopic = "__consumer_offsets"

// GroupState is a group's state, with the names Kafka's ListGroups
// gives.
type GroupState string

// The states of a classic group, and those only a consumer group
// (KIP-848) has; both have Empty, Stable and Dead.
const (
	GroupEmpty               GroupState = "Empty"
	GroupPreparingRebalance  GroupState = "PreparingRebalance"
	GroupCompletingRebalance GroupState = "CompletingRebalance"
	GroupStable              GroupState = "Stable"
	GroupDead                GroupState = "Dead"
	GroupAssigning           GroupState = "Assigning"
	GroupReconciling         GroupState = "Reconciling"
)

// Group is one consumer group as the broker coordinating it holds it.
type Group struct {
	ID string `json:"groupId"`
	// Coordinator is the broker that serves the group: the leader of its
	// partition of __consumer_offsets (OffsetsPartition; -1 when unknown:
	// read over the wire before __consumer_offsets was).
	Coordinator      int32      `json:"coordinator"`
	OffsetsPartition int32      `json:"offsetsPartition"`
	State            GroupState `json:"state"`
	// Type is "consumer" for a group of the consumer group protocol
	// (KIP-848), whose Generation is its group epoch and Protocol its
	// server assignor; empty for a classic group.
	Type string `json:"type,omitempty"`
	// ProtocolType is the members' protocol type ("consumer" for Kafka's
	// consumers), Protocol the assignor the group chose; "" when none.
	ProtocolType string `json:"protocolType"`
	Protocol     string `json:"protocol"`
	// Generation is -1 when unknown: read over the wire, as
	// DescribeGroups does not carry it.
	Generation int32 `json:"generation"`
	// Leader is the member that computes the assignment, "" when none
	// or unknown (DescribeGroups does not carry it either).
	Leader  string        `json:"leader"`
	Members []GroupMember `json:"members"`
	// Offsets are the group's committed offsets, by topic and partition.
	Offsets []GroupOffset `json:"offsets"`
}

// GroupMember is one member of a group.
type GroupMember struct {
	MemberID   string `json:"memberId"`
	InstanceID string `json:"groupInstanceId,omitempty"`
	ClientID   string `json:"clientId"`
	ClientHost string `json:"clientHost"`
	// Assigned are its partitions, decoded from the consumer protocol's
	// assignment; empty unless the group is Stable.
	Assigned []TopicPartition `json:"assigned"`
}

// GroupOffset is one committed offset, with the lag behind the
// partition's high watermark as kafka-consumer-groups --describe computes
// it (the consumer reads up to the high watermark, not the log end).
type GroupOffset struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Committed   int64  `json:"committedOffset"`
	LeaderEpoch int32  `json:"leaderEpoch"`
	// HighWatermark is the partition leader's, -1 when no running broker
	// leads it; Lag is HighWatermark minus Committed, -1 when unknown.
	HighWatermark int64 `json:"highWatermark"`
	Lag           int64 `json:"lag"`
}

// CoordinatorShard is one partition of __consumer_offsets a broker leads
// and serves the groups of.
type CoordinatorShard struct {
	Partition   int32 `json:"partition"`
	LeaderEpoch int32 `json:"leaderEpoch"`
	// Loading is true while the broker still reads the partition: its
	// groups answer COORDINATOR_LOAD_IN_PROGRESS meanwhile.
	Loading bool `json:"loading"`
	Groups  int  `json:"groups"`
}

// Group returns the group with id, if a running broker coordinates it.
func (v *View) Group(id string) (*Group, bool) {
	for i := range v.Groups {
		if v.Groups[i].ID == id {
			return &v.Groups[i], true
		}
	}
	return nil, false
}

// TotalLag is the sum of the group's known lags, and whether every
// committed offset's lag is known.
func (g *Group) TotalLag() (lag int64, known bool) {
	known = true
	for _, o := range g.Offsets {
		if o.Lag < 0 {
			known = false
			continue
		}
		lag += o.Lag
	}
	return lag, known
}
