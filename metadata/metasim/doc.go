// Package metasim runs the metadata layer of a KRaft cluster under the
// seeded simulation of package raftsim: three controllers, each the real
// raft.Node with the real QuorumController (in its manual mode) fed by
// the real metadata loader, and two or three brokers, each a raft observer
// with a loader that registers and heartbeats to the active controller
// with kmsg's BrokerRegistration and BrokerHeartbeat, plus a client that
// creates and deletes topics. Everything runs on raftsim's virtual clock,
// event queue and network (drops, delays, partitions), so one seed decides
// the whole run and replays it event for event.
//
// A seeded workload kills and restarts brokers (whose sessions then time
// out, fencing them) and controllers, and partitions the network; after
// every event the package checks that every node's image is a replay of
// the committed log up to the offset it applied, that a topic whose
// creation was acknowledged stays in every later committed image until a
// committed delete, that at most one controller is active per epoch, that
// no fenced broker leads a partition in a committed image, and that
// partition leader epochs never go back in the committed log. A failure
// names the seed and the last trace lines.
package metasim
