// Package zkcontroller is the ZooKeeper-era controller of Kafka 3.9
// (Kafka's kafka.controller): one broker wins the ephemeral /controller
// znode, reads the whole cluster out of ZooKeeper, and from then on
// pushes the cluster's state to the brokers with LeaderAndIsr and
// UpdateMetadata, through one queue and one sender per broker
// (ControllerChannelManager).
//
// It is the other side of KRaft's contrast. Here a new controller knows
// nothing until it has read every broker, topic and partition state
// (O(partitions)), and the cluster is unmanaged until it has: no leader
// moves, no ISR changes. Its watches on ZooKeeper are one-shot, so each
// is read again, and set again, when it fires. Every write is fenced by
// the controller epoch's zkVersion (see kafkazk).
//
// Its state is only touched by its event loop (Kafka's
// ControllerEventManager): watches, session changes and requests from
// brokers are events queued to that one goroutine.
package zkcontroller
