// Package cluster is the playground: its configuration and timing profiles
// (config.go), the one consistent view of every node that the TUI and the
// CLI show (view.go), the event stream (events.go), node references and the
// conditions that wait and expect check (noderef.go, condition.go), the
// background load's settings and view (load.go), the Engine interface that
// the running cluster implements (engine.go; the real one in cluster.go,
// node.go and loadgen.go), and the Playground that wraps an Engine for its
// users (playground.go).
//
// Layers: an Engine knows nodes, links and the protocol, and reports raw
// facts (each node's own state, the leader's replica table, link faults and
// counters). The Playground adds what is the same for any engine: it
// resolves "leader" and "old-leader", refuses actions that make no sense
// with a clear error, records the baseline before kill, stop, isolate and
// resign, publishes every action as an event, and derives the quorum
// summary (view.View.Derive) that kafka-metadata-quorum describe would print.
// The control API (package control) serves a Playground over a Unix socket,
// and scenarios (package scenario) run CLI lines against one.
package cluster
