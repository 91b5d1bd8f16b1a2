// Package fetcher is the follower side of partition replication, as Kafka's
// ReplicaFetcherManager and ReplicaFetcherThread build it.
//
// A Manager owns the fetcher threads of one broker: num.replica.fetchers
// threads per source (leader) broker, each partition hashed onto one of them
// exactly as Kafka hashes it (FetcherID). A Thread is one goroutine that
// loops: it builds one Fetch request holding every assigned partition that is
// Fetching and not delayed, sends it to its leader, and for each partition in
// the answer appends the records to the local Replica, updates its high
// watermark, or truncates it on a DivergingEpoch. The next Fetch is the
// acknowledgement: the leader learns the follower's position from its fetch
// offset, and nothing else is sent. So before it the thread flushes every
// replica the answer appended to (Replica.Flush, side by side), and a fetch
// offset never acknowledges what the follower has not made durable.
//
// Because one request carries every partition of a thread, a partition the
// leader is slow to answer holds back every other partition on the same
// thread, but not those on another thread: that is what num.replica.fetchers
// buys.
//
// The protocol is a Machine: it builds the Fetch, applies the answer and
// resets partitions out of range, with the time passed in and no I/O of
// its own, so a simulation can step it from an event queue (package
// datasim does). A Thread is the goroutine doing a Machine's I/O: the
// sends, the flushes and the waits.
//
// The package depends on the local replica only through the Replica
// interface and on the network only through a SendFunc, so it can be driven
// by an in-memory leader in tests.
package fetcher
