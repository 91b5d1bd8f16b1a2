// Package engine is the playground's real engine (a cluster.Engine): one
// server per node (package server, assembled into a server.Group) on
// loopback, all talking through one set of wire.Links that the playground
// breaks and mends. It turns what the servers report into the views the
// screen and the CLI show (metadataview.go, dataplaneview.go, metrics.go),
// narrates their events in words (narrate.go, narrate_metadata.go), runs
// the background loads (loadgen.go for metadata records, topicload.go for
// records through the brokers), and answers the admin actions (admin.go).
// NewServer builds one node's server from the playground's timing; the
// benchmarks build theirs with it too, so they measure the nodes a learner
// watches.
//
// Open starts a playground on this engine; its tests run real clusters.
package engine
