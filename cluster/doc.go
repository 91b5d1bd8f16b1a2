// Package cluster is the playground: its configuration and timing profiles
// (config.go), the Engine interface a running cluster implements
// (engine.go), the Playground that wraps an Engine for its users
// (playground.go: actions, node references resolved, the baseline, every
// action on the event stream), the event stream and its kinds (events.go,
// kinds.go), the background load's settings (load.go), topic actions
// (topics.go), and reading a node's metadata image and log as
// kafka-metadata-shell and kafka-dump-log do (metadata_browse.go,
// metadata_log.go). It starts no server and opens no socket: the real
// engine is package cluster/engine, the model the TUI's tests run is
// cluster/clustertest, and cli picks the engine at start.
//
// Layers: an Engine knows nodes, links and the protocol, and reports raw
// facts (each node's own state, the leader's replica table, link faults and
// counters). The Playground adds what is the same for any engine: it
// resolves "leader" and "old-leader", refuses actions that make no sense
// with a clear error, records the baseline before kill, stop, isolate and
// resign, publishes every action as an event, and derives the quorum
// summary (view.View.Derive) that kafka-metadata-quorum describe would print.
// The view model is package cluster/view, the wait/expect conditions and
// node references cluster/condition; the control API (cluster/control)
// serves a Playground over a Unix socket, and scenarios (cluster/scenario)
// run CLI lines against one.
package cluster
