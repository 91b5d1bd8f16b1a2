// Package datasim runs the data plane of a topic's partitions (one to
// three, two by default, each preferring another leader) under a seeded
// deterministic simulation, as raftsim and metasim run the quorum and the
// metadata layer: three brokers, each with its real partition.Partition
// replicas on a real log directory, the real fetcher.Machine of a replica
// fetcher thread per source broker (stepped from the event queue as
// fetcher.Thread steps it from a goroutine, so one request carries every
// partition a follower fetches from that leader), and the leader side of
// a replica's Fetch and ListOffsets as the server answers them (Read,
// UpdateFollowerFetch, DelayedFetch in a Purgatory), with acks=all
// produces waiting in a Purgatory for the high watermark. One seed in
// four flushes on write instead of with the leader's group commit and the
// fetcher's flush, one has min.insync.replicas 1.
//
// What it models rather than runs: the controller (registrations,
// heartbeats and fencing, leader elections from the ISR, AlterPartition
// answered against the leader and partition epochs), the metadata that
// carries its decisions to the brokers (applied, as Kafka's broker does,
// only once it holds the broker's own registration), the network (seeded delays, random
// losses, cut links, slow links, isolated brokers) and the producer.
// Faults are broker crashes (the log cut to what it flushed; one in
// three also leaves a torn write, zeroed or random bytes, past the
// flushed end of a partition's newest segment, which recovery must cut
// off) and restarts, network faults, and leader moves; a quiet spell ends the run.
// Everything happens on one virtual clock in one goroutine, with no map
// order observed, so a run is a function of its seed.
//
// After every event it checks that every replica's log below its high
// watermark is the same committed log byte for byte, that an acknowledged
// acks=all batch is in it and on every leader of a later epoch, that a
// replica's high watermark never goes back within an incarnation, that a
// leader's high watermark never passes the log end of a running member of
// its ISR, that the controller's leader and partition epochs never go
// back, and that a consumer reading at a leader sees only committed
// batches below the high watermark. After the quiet spell every broker
// must be back in the ISR holding every acknowledged batch. A failure
// names the seed and shows the last lines of the trace.
package datasim
