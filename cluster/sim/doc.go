// Package sim runs the whole cluster under one seeded simulation: the
// metadata layer of package metasim (three controllers, each the real
// raft node, QuorumController and loader; three brokers, each a raft
// observer with a loader and a lifecycle that registers and heartbeats)
// with the data plane of package datasim placed on its brokers (the real
// partition.Partition replicas on real log folders, the real fetcher
// state machines, the leader side of Fetch and ListOffsets, an acks=all
// producer). The brokers apply the images their loaders publish, as the
// server's ReplicaManager does, and their partition leaders send
// AlterPartition to the real controller. One clock, one event queue, one
// network, one random source: a run is a function of its seed.
//
// Faults are metasim's (kills, restarts and controlled shutdowns of
// brokers and controllers, cut nodes, network partitions, lossy and slow
// links, snapshots, resignations) while the clients churn other topics
// and the producer writes. After every event both layers' invariants are
// checked: every node's image is a replay of the committed metadata log;
// no fenced broker leads; one active controller per epoch; every
// replica's log below its high watermark is the committed log; an
// acknowledged acks=all batch is on every later leader; a leader's high
// watermark never goes back within its epoch nor passes an ISR member's
// log end; the committed leader and partition epochs never go back; a
// consumer sees only committed batches. After the faults the cluster must
// heal: every broker registered, unfenced, in every ISR and holding every
// acknowledged batch.
package sim
