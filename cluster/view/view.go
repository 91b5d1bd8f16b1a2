package view

import (
	"cmp"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// View is one consistent snapshot of the whole playground: what the TUI
// draws, what `kraftlab status --json` prints and what conditions test.
//
// The Engine fills ClusterID, Timestamp, Nodes (each with its own Replicas
// table when it is a leader, and a broker's Broker), Links, Load and
// Topics. Derive fills the rest: the quorum summary named after
// kafka-metadata-quorum describe, node states, the partitions each broker
// leads, and the baseline.
type View struct {
	ClusterID string `json:"clusterId"`
	// LeaderID is the leader in the highest epoch any live node leads, or
	// NoLeader. A leader cut off from the majority keeps leading its older
	// epoch for a while; it shows in Nodes, not here.
	LeaderID    int32 `json:"leaderId"`
	LeaderEpoch int32 `json:"leaderEpoch"`
	// HighWatermark is the leader's, or -1 when there is no leader or the
	// leader has not yet committed in its epoch.
	HighWatermark        int64     `json:"highWatermark"`
	MaxFollowerLag       int64     `json:"maxFollowerLag"`
	MaxFollowerLagTimeMs int64     `json:"maxFollowerLagTimeMs"`
	CurrentVoters        []Replica `json:"currentVoters"`
	CurrentObservers     []Replica `json:"currentObservers"`

	// Timestamp is when the snapshot was taken, in Unix milliseconds of
	// cluster time (Clock), as every other time of the view: it stands
	// still while the clock is paused.
	Timestamp int64 `json:"timestamp"`
	// Clock is the cluster clock's state when the view was taken.
	Clock Clock `json:"clock"`
	// Messages are the first MaxViewMessages messages the links hold, in
	// the order they came, and HeldMessages how many they hold in all.
	Messages     []Message `json:"messages,omitempty"`
	HeldMessages int       `json:"heldMessages,omitempty"`
	// Trace are the last MaxViewTrace messages that crossed the links,
	// oldest first, without their Fields.
	Trace []TraceMessage `json:"trace,omitempty"`
	// Profile is the timing profile the playground started with.
	Profile string `json:"profile"`
	// DataDir is the folder the nodes keep their data in; empty when the
	// engine chose a temporary one itself.
	DataDir string `json:"dataDir,omitempty"`
	// Settings are the servers' settings by Kafka config name, as --set
	// takes them: the profile's after the playground's overrides.
	Settings map[string]string `json:"settings,omitempty"`
	// Baseline is what the quorum looked like just before the last kill,
	// stop, isolate or resign; nil before the first of them.
	Baseline *Baseline `json:"baseline"`
	Nodes    []Node    `json:"nodes"`
	Links    []Link    `json:"links"`
	// Load is the background load of the metadata log.
	Load Load `json:"load"`
	// TopicLoads are the background loads of topics, through the
	// brokers, one a topic, by topic name.
	TopicLoads []TopicLoad `json:"topicLoads"`
	// Topics are the topics of the active controller's committed
	// metadata, by name; empty while no controller is active.
	Topics []Topic `json:"topics"`
	// Groups are the consumer groups the running brokers coordinate, by
	// id, with their lags behind the partitions' high watermarks.
	Groups []Group `json:"groups"`
	// ZooKeeper is the ZooKeeper-era mode's ZooKeeper and controller;
	// nil in KRaft mode.
	ZooKeeper *ZooKeeper `json:"zookeeper,omitempty"`
	// ExternalBrokers are the brokers the committed metadata registers
	// that are not the playground's nodes, such as a real Kafka broker
	// that joined its controllers; by ID.
	ExternalBrokers []ExternalBroker `json:"externalBrokers,omitempty"`
	// Sim is set when the playground runs under the seeded simulator
	// (kraftlab up --sim); nil otherwise.
	Sim *Sim `json:"sim,omitempty"`
	// Attached is set when the view is of a real Kafka cluster kraftlab
	// reads over the wire (kraftlab tui --bootstrap-server), not of a
	// playground; nil otherwise.
	Attached *Attached `json:"attached,omitempty"`
}

// Replica is one replica of the metadata log as the leader sees it,
// with DescribeQuorum's field names.
type Replica struct {
	NodeID int32 `json:"nodeId"`
	// DirectoryID is a voter's directory id in the voter set and an
	// observer's the one its fetches carry (its folder's), as Kafka
	// prints it; "" when zero (a voter of a static quorum).
	DirectoryID string `json:"directoryId,omitempty"`
	// LogEndOffset is the offset of the replica's last Fetch (the fetch is
	// the acknowledgement), or -1 before the leader has heard from it.
	LogEndOffset int64 `json:"logEndOffset"`
	// Lag is the leader's log end offset minus LogEndOffset, computed as
	// kafka-metadata-quorum does (so -1 offsets give the leader's LEO + 1).
	Lag int64 `json:"lag"`
	// LastFetchTimestamp and LastCaughtUpTimestamp are Unix milliseconds,
	// -1 when unknown; the leader reports both as now for itself.
	LastFetchTimestamp    int64 `json:"lastFetchTimestamp"`
	LastCaughtUpTimestamp int64 `json:"lastCaughtUpTimestamp"`
	// Status is Leader, Follower or Observer.
	Status ReplicaStatus `json:"status"`
	// State is the node's playground state (running, killed…).
	State State `json:"state"`
	// ParkedFetch is true while the leader holds this replica's Fetch in
	// its purgatory, waiting for new records or the fetch's max wait.
	ParkedFetch bool `json:"parkedFetch"`
	// Push is where a push leader (kraftlab up --quorum push) stands with
	// the replica: probing (one AppendEntries at a time, looking for where
	// their logs match), replicating (streaming, up to 256 requests ahead
	// of the answers) or snapshotting; "" under pull. InFlight counts its
	// requests to the replica that are neither answered nor timed out.
	Push     string `json:"push,omitempty"`
	InFlight int    `json:"inFlight,omitempty"`
}

// Restart is a node's own restarts after it stopped on a disk fault: it
// probes its folder with a write after a backoff (doubling to 1 s) and
// starts again once the folder takes one.
type Restart struct {
	// Attempts counts the probes refused so far.
	Attempts int `json:"attempts"`
	// NextTimestamp is when the next probe is due, Unix milliseconds.
	NextTimestamp int64 `json:"nextTimestamp"`
	// LastError is why the last probe was refused, empty before the
	// first.
	LastError string `json:"lastError,omitempty"`
}

// Node is one node as it sees itself.
type Node struct {
	ID       int32  `json:"nodeId"`
	Kind     Kind   `json:"kind"`
	Listener string `json:"listener"`
	State    State  `json:"state"`
	// Error says why a failed node failed, led by the kind of disk
	// trouble if it was one ("disk full: ..."); a leader whose disk
	// failed says so while it hands its leadership over. Empty otherwise.
	Error string `json:"error,omitempty"`
	// Restart is what a node that stopped on a disk fault does to start
	// again by itself; nil otherwise.
	Restart *Restart `json:"restart,omitempty"`
	// DiskDelayMs is how much longer each write and fsync of the node's
	// files takes (kraftlab disk NODE --delay): its metadata log's and, on
	// a broker, its partition logs'. 0 for a normal disk.
	DiskDelayMs int64 `json:"diskDelayMs,omitempty"`
	// SnapshotError is why a running node's latest snapshot could not be
	// written ("disk full: ..."): it runs on from its log. Empty once a
	// snapshot is written.
	SnapshotError string `json:"snapshotError,omitempty"`
	// KRaftVersion is the kraft.version the node's metadata log
	// finalized: 0 a static quorum, 1 a dynamic one.
	KRaftVersion int16 `json:"kraftVersion,omitempty"`
	// Voters is a dynamic quorum's voter set in force on the node (the
	// latest VotersRecord in its log, committed or not); nil in a static
	// quorum, whose voters are its controllers.
	Voters []int32 `json:"voters,omitempty"`
	// Role is empty while the node is not running.
	Role  Role  `json:"role"`
	Epoch int32 `json:"epoch"`
	// LeaderID is the leader this node knows in its epoch, or NoLeader.
	LeaderID int32 `json:"leaderId"`
	// VotedID is the candidate this node voted for in its epoch, or -1.
	VotedID        int32       `json:"votedId"`
	LogEndOffset   int64       `json:"logEndOffset"`
	HighWatermark  int64       `json:"highWatermark"`
	LogStartOffset int64       `json:"logStartOffset"`
	LatestSnapshot *SnapshotID `json:"latestSnapshot"`
	// FetchDeadlineTimestamp is when a following voter's fetch timeout
	// runs out (Unix milliseconds) unless a fetch from its leader succeeds
	// first; it then starts an election. -1 on other nodes.
	FetchDeadlineTimestamp int64 `json:"fetchDeadlineTimestamp"`
	// Truncations counts the times this node cut its log back after a
	// Fetch response carried a DivergingEpoch, since the playground started.
	Truncations int64 `json:"truncations"`
	// SnapshotsLoaded counts the snapshots this node fetched from the
	// leader and loaded, since the playground started.
	SnapshotsLoaded int64 `json:"snapshotsLoaded"`
	// Refusals is the news this node refused because it would break
	// Raft's safety; nil while it refused none.
	Refusals *Refusals `json:"refusals,omitempty"`
	// Strangers is what this node refused to peers that are not members
	// of the playground; nil while it refused nothing.
	Strangers *Strangers `json:"strangers,omitempty"`
	// Replicas is the node's table of every replica's fetch state, filled
	// only while the node is a leader.
	Replicas []Replica `json:"replicas,omitempty"`
	// RPC counts the requests this node received, from any client (users'
	// own Kafka clients included), by API name (Fetch, Vote,
	// BeginQuorumEpoch…), and its responses to them.
	RPC map[string]RPCStats `json:"rpc,omitempty"`
	// RaftMetrics is the node's kafka.server:type=raft-metrics, nil while
	// it does not run.
	RaftMetrics *RaftMetrics `json:"raftMetrics,omitempty"`
	// Metadata is what the node's metadata loader applied, nil while the
	// node does not run.
	Metadata *Metadata `json:"metadata,omitempty"`
	// Broker is a broker's place in the metadata; nil for controllers.
	Broker *Broker `json:"broker,omitempty"`
	// ControllerMetrics is a running controller's quorum controller
	// metrics; nil for brokers and nodes that do not run.
	ControllerMetrics *ControllerMetrics `json:"controllerMetrics,omitempty"`
}

// Metadata is a node's metadata loader (Kafka's MetadataLoader), named
// after Kafka's broker-metadata-metrics and MetadataLoader metrics.
type Metadata struct {
	// LastAppliedRecordOffset is the offset of the last record the node's
	// metadata image holds, -1 before the first.
	LastAppliedRecordOffset int64 `json:"last-applied-record-offset"`
	// LastAppliedRecordTimestamp is that record's append time (Unix
	// milliseconds), -1 before the first; LastAppliedRecordLagMs is how
	// long ago that was.
	LastAppliedRecordTimestamp int64 `json:"last-applied-record-timestamp"`
	LastAppliedRecordLagMs     int64 `json:"last-applied-record-lag-ms"`
	// MetadataLoadErrorCount counts the records that could not be decoded
	// or replayed: the loader stops at the first, and LoadError says why.
	MetadataLoadErrorCount int64  `json:"metadata-load-error-count"`
	LoadError              string `json:"loadError,omitempty"`
	// MetadataApplyErrorCount counts the parts that failed on an image.
	MetadataApplyErrorCount int64 `json:"metadata-apply-error-count"`
	// HandleLoadSnapshotCount counts the snapshots this incarnation loaded.
	HandleLoadSnapshotCount int64 `json:"handle-load-snapshot-count"`
	// CurrentMetadataVersion is the metadata.version feature level, 0
	// while the log set none.
	CurrentMetadataVersion int16 `json:"current-metadata-version"`
	// LastChange is the last change to the cluster's metadata the node
	// applied from the log (not NoOps, not the background load); nil
	// before the first.
	LastChange *MetadataChange `json:"lastChange,omitempty"`
}

// MetadataChange is one change to the cluster's metadata as a node
// applied it.
type MetadataChange struct {
	// Offset is the last offset of the batch that held it.
	Offset int64 `json:"offset"`
	// What says in a few words what changed.
	What string `json:"what"`
	// AppendTimestamp is when the controller appended it and
	// AppliedTimestamp when the node applied it, in Unix milliseconds;
	// AppliedAfterUs is the time between, in microseconds: the
	// propagation to this node.
	AppendTimestamp  int64 `json:"appendTimestamp"`
	AppliedTimestamp int64 `json:"appliedTimestamp"`
	AppliedAfterUs   int64 `json:"appliedAfterUs"`
}

// Refusals counts the news a node refused because it would break Raft's
// safety (a forged epoch, a second leader in an epoch, a truncation below
// its high watermark) and says what the latest was.
type Refusals struct {
	Count int64 `json:"count"`
	// Last is the latest refusal: what was refused, and why.
	Last string `json:"last"`
	// KafkaStops: on the latest, Kafka's raft client would have stopped
	// with a fatal error, where kraftlab ignores the news and goes on. A
	// node refusing such news again and again cannot go on safely: it
	// needs its data back (kraftlab wipe, or a copy of a healthy voter's
	// folder).
	KafkaStops bool `json:"kafkaStops"`
}

// Strangers counts what a node refused to clients that did not prove they
// are members of the playground: SASL authentications that failed, and
// cluster APIs (the quorum's RPCs) asked for on an anonymous connection,
// answered CLUSTER_AUTHORIZATION_FAILED, by API name.
type Strangers struct {
	AuthFailures int64            `json:"authFailures"`
	Unauthorized map[string]int64 `json:"unauthorized,omitempty"`
}

// SnapshotID names a snapshot by the offset it ends before and the epoch of
// its last record, as Kafka's SnapshotId does: storage's, the one type the
// whole engine uses.
type SnapshotID = storage.SnapshotID

// Link is the directed link From → To: its faults and its traffic. A
// fault applies to every message From sends To, its requests and its
// responses to To's requests alike, as a real one-way network fault would.
type Link struct {
	From     int32   `json:"from"`
	To       int32   `json:"to"`
	Down     bool    `json:"down"`
	DelayMs  int64   `json:"delayMs"`
	JitterMs int64   `json:"jitterMs"`
	Loss     float64 `json:"loss"`
	// Dropped counts the messages (From's requests to To and From's
	// responses to To) that the link's faults dropped, and those lost to
	// drop while the clock was paused.
	Dropped int64 `json:"dropped"`
	// RPC counts the requests From sent To, by API name, and To's
	// responses to them.
	RPC map[string]RPCStats `json:"rpc,omitempty"`
}

// Fault returns the link's faults.
func (l Link) Fault() LinkFault {
	return LinkFault{
		Down:   l.Down,
		Delay:  time.Duration(l.DelayMs) * time.Millisecond,
		Jitter: time.Duration(l.JitterMs) * time.Millisecond,
		Loss:   l.Loss,
	}
}

// RPCStats counts the requests of one API and the responses to them, with
// their bytes on the wire (size prefix and header included).
type RPCStats struct {
	Requests      int64 `json:"requests"`
	RequestBytes  int64 `json:"requestBytes"`
	Responses     int64 `json:"responses"`
	ResponseBytes int64 `json:"responseBytes"`
}

// Baseline is the quorum just before the last kill, stop, isolate,
// resign, wipe, disk or mark: the reference for the new-leader condition, the
// old-leader node reference and `baseline` values in conditions.
type Baseline struct {
	// Action is the action that recorded it: kill, stop, isolate, resign,
	// wipe, disk or mark.
	Action string `json:"action"`
	// NodeID is the node the action targeted; 0 for a mark.
	NodeID int32 `json:"nodeId"`
	// LeaderID is the leader then, or NoLeader.
	LeaderID int32 `json:"leaderId"`
	// LeaderEpoch is the highest epoch in which any node knew a leader.
	LeaderEpoch   int32 `json:"leaderEpoch"`
	HighWatermark int64 `json:"highWatermark"`
	Timestamp     int64 `json:"timestamp"`
}

// Node returns the node with the given ID.
func (v *View) Node(id int32) (*Node, bool) {
	for i := range v.Nodes {
		if v.Nodes[i].ID == id {
			return &v.Nodes[i], true
		}
	}
	return nil, false
}

// Leader returns the leader node, if there is one.
func (v *View) Leader() (*Node, bool) {
	if v.LeaderID == NoLeader {
		return nil, false
	}
	return v.Node(v.LeaderID)
}

// Replica returns a replica's fetch state as the leader sees it.
func (v *View) Replica(id int32) (Replica, bool) {
	for _, list := range [][]Replica{v.CurrentVoters, v.CurrentObservers} {
		for _, r := range list {
			if r.NodeID == id {
				return r, true
			}
		}
	}
	return Replica{}, false
}

// Link returns the directed link from → to; a link the engine did not
// report is healthy and idle.
func (v *View) Link(from, to int32) Link {
	for _, l := range v.Links {
		if l.From == from && l.To == to {
			return l
		}
	}
	return Link{From: from, To: to}
}

// LinkCuts lists the peers node id cannot reach: both ways, only what it
// sends (out), only what they send it (in). An isolated peer is left out
// for any node but itself: its own state says it is cut off from everyone.
func (v *View) LinkCuts(id int32) (both, out, in []int32) {
	for _, p := range v.Nodes {
		if p.ID == id || p.State == StateIsolated {
			continue
		}
		o, i := v.Link(id, p.ID).Down, v.Link(p.ID, id).Down
		switch {
		case o && i:
			both = append(both, p.ID)
		case o:
			out = append(out, p.ID)
		case i:
			in = append(in, p.ID)
		}
	}
	return both, out, in
}

// Partitioned reports whether a running node has a link to or from a
// peer cut (by partition, not isolate: an isolated node is
// StateIsolated).
func (v *View) Partitioned(n *Node) bool {
	if n.State != StateRunning {
		return false
	}
	both, out, in := v.LinkCuts(n.ID)
	return len(both)+len(out)+len(in) > 0
}

// NodeIDs returns every node ID in order.
func (v *View) NodeIDs() []int32 {
	ids := make([]int32, len(v.Nodes))
	for i, n := range v.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// IsBroker reports whether the node is a broker: of the broker kind, or
// a node of a real cluster that is both controller and broker.
func (n *Node) IsBroker() bool { return n.Kind == KindBroker || n.Broker != nil }

// Live reports whether the node process is up (running or isolated).
func (n *Node) Live() bool { return n.State == StateRunning || n.State == StateIsolated }

// Derive completes a View the Engine filled: it orders nodes and links,
// marks isolated nodes, picks the leader in the highest epoch, copies that
// leader's replica table into CurrentVoters and CurrentObservers with
// statuses and lags, computes MaxFollowerLag and MaxFollowerLagTimeMs, and
// attaches the baseline. now is used when the engine left Timestamp zero.
func (v *View) Derive(now time.Time, baseline *Baseline) {
	if v.Timestamp == 0 {
		v.Timestamp = now.UnixMilli()
	}
	v.Baseline = baseline
	if v.Nodes == nil {
		v.Nodes = []Node{}
	}
	if v.Links == nil {
		v.Links = []Link{}
	}
	if v.Topics == nil {
		v.Topics = []Topic{}
	}
	if v.Groups == nil {
		v.Groups = []Group{}
	}
	sortTopics(v.Topics)
	v.countLeaderships()
	slices.SortFunc(v.Nodes, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(v.Links, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.State == StateRunning || n.State == StateIsolated {
			n.State = StateRunning
			if v.cutOff(n.ID) {
				n.State = StateIsolated
			}
		}
	}

	v.LeaderID, v.LeaderEpoch, v.HighWatermark = NoLeader, NoLeader, -1
	v.CurrentVoters, v.CurrentObservers = []Replica{}, []Replica{}
	v.MaxFollowerLag, v.MaxFollowerLagTimeMs = 0, 0
	var leader *Node
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Live() && n.Role == RoleLeader && (leader == nil || n.Epoch > leader.Epoch) {
			leader = n
		}
	}
	if leader == nil {
		return
	}
	v.LeaderID, v.LeaderEpoch, v.HighWatermark = leader.ID, leader.Epoch, leader.HighWatermark
	v.fillReplicas(leader)
	v.MaxFollowerLag = MaxFollowerLag(v.LeaderID, v.CurrentVoters)
	v.MaxFollowerLagTimeMs = MaxFollowerLagTimeMs(v.LeaderID, v.CurrentVoters)
}

// cutOff reports whether every link to and from id is down.
func (v *View) cutOff(id int32) bool {
	peers := 0
	for _, p := range v.Nodes {
		if p.ID == id {
			continue
		}
		peers++
		if !v.Link(id, p.ID).Down || !v.Link(p.ID, id).Down {
			return false
		}
	}
	return peers > 0
}

func (v *View) fillReplicas(leader *Node) {
	// The leader lists its voters first: a second row with a voter's id
	// is an observer fetching from another folder under that id (a wiped
	// voter whose new directory id the voter set does not name), listed
	// among the observers, as describe --replication lists it.
	known := make(map[int32]Replica, len(leader.Replicas))
	var again []Replica
	for _, r := range leader.Replicas {
		if _, ok := known[r.NodeID]; ok {
			again = append(again, r)
			continue
		}
		known[r.NodeID] = r
	}
	// A dynamic quorum's voters are those of the leader's voter set; a
	// static quorum's are its controllers.
	votes := func(n Node) bool {
		if leader.Voters != nil {
			return slices.Contains(leader.Voters, n.ID)
		}
		return n.Kind == KindController
	}
	for _, n := range v.Nodes {
		r, ok := known[n.ID]
		if !ok {
			if !votes(n) {
				continue // the leader has not heard from this observer
			}
			r = Replica{NodeID: n.ID, LogEndOffset: -1, LastFetchTimestamp: -1, LastCaughtUpTimestamp: -1}
		}
		r.State = n.State
		switch {
		case n.ID == leader.ID:
			r.Status = StatusLeader
			r.LogEndOffset = leader.LogEndOffset
			r.LastFetchTimestamp, r.LastCaughtUpTimestamp = v.Timestamp, v.Timestamp
			r.ParkedFetch = false
		case votes(n):
			r.Status = StatusFollower
		default:
			r.Status = StatusObserver
		}
		r.Lag = leader.LogEndOffset - r.LogEndOffset
		if votes(n) {
			v.CurrentVoters = append(v.CurrentVoters, r)
		} else {
			v.CurrentObservers = append(v.CurrentObservers, r)
		}
	}
	for _, r := range again {
		if n, ok := v.Node(r.NodeID); ok {
			r.State = n.State
		}
		r.Status = StatusObserver
		r.Lag = leader.LogEndOffset - r.LogEndOffset
		v.CurrentObservers = append(v.CurrentObservers, r)
	}
	// The leader first, then the followers, as describe --replication lists them.
	slices.SortStableFunc(v.CurrentVoters, func(a, b Replica) int {
		return cmp.Compare(boolRank(a.NodeID != leader.ID), boolRank(b.NodeID != leader.ID))
	})
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MaxFollowerLag is what kafka-metadata-quorum describe --status prints: the
// leader's log end offset minus the smallest log end offset of any voter.
func MaxFollowerLag(leaderID int32, voters []Replica) int64 {
	leader, laggiest, ok := leaderAndLaggiest(leaderID, voters)
	if !ok {
		return 0
	}
	return leader.LogEndOffset - laggiest.LogEndOffset
}

// MaxFollowerLagTimeMs is what kafka-metadata-quorum describe --status
// prints: 0 when the leader is the laggiest voter, else the leader's last
// caught-up time minus the laggiest voter's, or -1 when either is unknown.
// Among voters tied for the smallest log end offset the one with the lowest
// id counts as the laggiest, as MetadataQuorumCommand's Stream.min picks
// the first in the answer's order, which is by id.
func MaxFollowerLagTimeMs(leaderID int32, voters []Replica) int64 {
	leader, laggiest, ok := leaderAndLaggiest(leaderID, voters)
	switch {
	case !ok:
		return -1
	case laggiest.NodeID == leader.NodeID:
		return 0
	case leader.LastCaughtUpTimestamp < 0 || laggiest.LastCaughtUpTimestamp < 0:
		return -1
	}
	return leader.LastCaughtUpTimestamp - laggiest.LastCaughtUpTimestamp
}

func leaderAndLaggiest(leaderID int32, voters []Replica) (leader, laggiest Replica, ok bool) {
	i := slices.IndexFunc(voters, func(r Replica) bool { return r.NodeID == leaderID })
	if i < 0 {
		return leader, laggiest, false
	}
	leader = voters[i]
	byID := slices.Clone(voters)
	slices.SortFunc(byID, func(a, b Replica) int { return cmp.Compare(a.NodeID, b.NodeID) })
	laggiest = byID[0]
	for _, r := range byID {
		if r.LogEndOffset < laggiest.LogEndOffset {
			laggiest = r
		}
	}
	return leader, laggiest, true
}
