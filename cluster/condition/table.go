package condition

import "slices"

// forms are the conditions wait and expect understand, in the order Forms
// lists them. A new condition is a row here: Parse, String, Eval, Forms
// and the errors all read it.
var forms = []form{
	// The metadata quorum and its nodes.
	{word: "leader", help: "a leader is known", eval: leaderKnown},
	{word: "leader", args: []arg{isOrNot, comparedNode}, example: "leader != 2",
		help: "a leader is known and it is (not) node N", eval: leaderIs},
	{word: "new-leader", help: "a leader in an epoch above the baseline's (see below)", eval: newLeader},
	{word: "epoch", args: []arg{anyOp, numberOrBaseline}, example: "epoch > baseline",
		help: "the leader's epoch compared with V", eval: leaderValue(leaderEpoch, baseEpoch)},
	{word: "hwm", args: []arg{anyOp, numberOrBaseline}, note: "(the metadata log's)", example: "hwm >= baseline+5",
		help: "the metadata log leader's high watermark compared with V", eval: leaderValue(leaderHWM, baseHWM)},
	{word: "caught-up", eval: caughtUp,
		help: "every running voter and broker is at the leader's log end offset\nand every unfenced broker has applied all committed metadata"},
	{word: "voters", args: []arg{anyOp, number}, example: "voters == 3",
		help: "the number of voters in the leader's voter set (a dynamic quorum's changes with controllers add/remove)", eval: votersCount},
	{word: "voter", args: []arg{anyNode}, example: "voter 4",
		help: "node NODE is in the leader's voter set (by id: a wiped controller's old entry\nstays until controllers remove; its role says it is an Observer)", eval: isVoter},
	{word: "node", args: []arg{anyNode, keyword("role"), notEq, role}, example: "node 3 role Follower",
		help: choices(role), eval: onNode(nodeRole)},
	{word: "node", args: []arg{anyNode, keyword("state"), notEq, state}, example: "node old-leader state isolated",
		help: choices(state), eval: onNode(nodeState)},
	{word: "node", args: []arg{anyNode, field, anyOp, fieldValue},
		help: choices(field), eval: onNode(compareNodeField)},

	// The cluster's metadata: brokers, topics and partitions.
	{word: "fenced", args: []arg{anyNode}, example: "fenced 101",
		help: "the committed metadata has broker NODE fenced (unfenced)", eval: onBroker(isFenced)},
	{word: "unfenced", args: []arg{anyNode}, example: "unfenced 101",
		eval: onBroker(isUnfenced)},
	{word: "broker", args: []arg{anyNode, keyword("state"), notEq, brokerState}, example: "broker 101 state != RUNNING",
		help: choices(brokerState), eval: onBroker(brokerIn)},
	{word: "metadata-lag", args: []arg{anyNode, anyOp, number}, example: "metadata-lag 101 == 0",
		help: "offsets of the committed metadata log broker NODE has not applied (kraftlab's own measure: Kafka never fences on it)", eval: onBroker(metadataLag)},
	{word: "topic", args: []arg{topicName, keyword("on"), keyword("all"), keyword("brokers")}, example: "topic orders on all brokers",
		help: "every running broker's metadata has topic T", eval: topicOnAllBrokers},
	{word: "partition-leader", args: []arg{topicPartition, eqOrNe, comparedNode}, example: "partition-leader orders-0 != 101",
		help: "partition P of topic T is led by (not by) broker N; OP is == or !=", eval: onPartition(partitionLeader)},
	{word: "isr", args: []arg{topicPartition, keyword("size"), anyOp, number}, example: "isr orders-0 size >= 2",
		help: "the size of partition T-P's in-sync replica set", eval: onPartition(isrSize)},
	{word: "reassigned", args: []arg{topicPartition}, example: "reassigned orders-0",
		help: "partition T-P has no reassignment in progress: none adding or removing replicas", eval: onPartition(reassigned)},

	// The data plane: partitions' logs on the brokers and their fetchers.
	{word: "hwm", args: []arg{topicPartition, anyOp, offset}, note: "(a partition's)", example: "hwm orders-0 >= 50",
		help: "partition T-P's high watermark on its leader (-1 while no broker leads it)", eval: onPartition(partitionHWM)},
	{word: "log-end", args: []arg{topicPartition, broker, anyOp, offset}, example: "log-end orders-0 102 == 50",
		help: "the log end offset of broker N's replica of T-P (-1 when not hosted)", eval: onPartition(replicaLogEnd)},
	{word: "fetcher-lag", args: []arg{broker, anyOp, number}, example: "fetcher-lag 102 == 0",
		help: "broker N's largest fetcher partition lag (Kafka's MaxLag; 0 without fetchers)", eval: onFetchers(fetcherLag)},
	{word: "in-sync", args: []arg{topicPartition}, example: "in-sync orders-0",
		help: "every replica is in T-P's ISR and every hosted log ends at its high watermark", eval: onPartition(inSync)},
	{word: "truncations", args: []arg{topicPartition, broker, anyOp, offset}, example: "truncations orders-0 102 >= 1",
		help: "times broker N's fetcher cut its replica of T-P back (since it last became a follower)", eval: onFetchers(truncations)},

	// Consumer groups, as the brokers coordinating them hold them.
	{word: "group-stable", args: []arg{groupName}, example: "group-stable billing",
		help: "consumer group G is Stable: its members joined and have their assignment", eval: onGroup(groupStable)},
	{word: "group-members", args: []arg{groupName, anyOp, number}, example: "group-members billing == 2",
		help: "the number of members of consumer group G", eval: onGroup(groupMembers)},
	{word: "group-lag", args: []arg{groupName, anyOp, number}, example: "group-lag billing == 0",
		help: "consumer group G's lag: its committed offsets behind the high watermarks, summed", eval: onGroup(groupLag)},
	{word: "group-coordinator", args: []arg{groupName, eqOrNe, comparedNode}, example: "group-coordinator billing != target",
		help: "the broker serving group G (once it has loaded it) is (not) broker N", eval: onGroup(groupCoordinator)},

	// Stopped time: the messages the links hold while the clock is paused.
	{word: "held", args: []arg{apiName}, example: "held CreateTopics",
		help: "a message of API (Kafka's name: Fetch, Vote, CreateTopics…) waits at the links", eval: heldAPI},
	{word: "parked", eval: allParked,
		help: "every running follower's and observer's Fetch waits at the leader, parked\nfor new records: none is in flight (step --until parked gets there)"},
}

// Forms lists the conditions wait and expect understand, one per
// line, for help texts.
var Forms = formsText() + `OP is one of == != > >= < <=. NODE is a node ID, leader, follower,
old-leader, target, leader-of:T-P, follower-of:T-P or coordinator-of:G; N and BROKER a
broker's ID, leader-of:T-P, follower-of:T-P or coordinator-of:G. V is a number, or for
epoch, hwm OP V and node NODE hwm/log-end "baseline" or "baseline+K": the leader's epoch (for epoch) or high watermark
(for hwm and log-end) just before the last kill, stop, isolate, resign,
wipe, disk or mark. old-leader is the leader then, target the node it
acted on (none for a mark), follower
the running follower of the current leader with the lowest ID (a wait
waits for one); leader-of:T-P is the broker leading partition T-P,
follower-of:T-P its in-sync follower with the lowest ID (while it has no
leader, its replica with the lowest ID outside the ISR and the ELR);
coordinator-of:G is the broker FindCoordinator names for group G, the
leader of its partition of __consumer_offsets.`

// Words are the first words of the conditions, each once, in the order
// Forms lists them: what a shell completes first.
func Words() []string {
	var out []string
	for _, f := range forms {
		if !slices.Contains(out, f.word) {
			out = append(out, f.word)
		}
	}
	return out
}

// NodeWords are the words that may follow "node NODE": role, state and
// the node fields.
func NodeWords() []string { return append([]string{"role", "state"}, fieldNames()...) }
