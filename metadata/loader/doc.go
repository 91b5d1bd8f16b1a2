// Package loader is Kafka's MetadataLoader for kraftlab: the part of every
// node, controller or broker, that turns the committed metadata log into
// MetadataImages and hands each one to the node's other parts.
//
// A Loader is the quorum.Listener of one incarnation of a node. The raft
// client hands it committed batches in offset order; it decodes each
// record (record.Decode), replays it into an image.MetadataDelta and, at
// the end of each handful of batches it is handed, applies the delta as
// the next image and publishes it: Image returns it to any goroutine, and
// each Publisher is told on the loader's goroutine, in log order. On a
// server that goroutine is the loader's own (quorum.NewListenerQueue), as
// Kafka's MetadataLoader works on its own event queue: the raft client's
// loop only copies the batches to it.
// Control batches (LeaderChange) hold no metadata: they move the image's
// offset and nothing else. A snapshot replaces the image with the one its
// records describe, as image.NewSnapshotDelta over the current image.
//
// Metadata transactions (KIP-868) are applied as one unit, as Kafka's
// MetadataBatchLoader applies them: at a BeginTransactionRecord the loader
// publishes what it replayed before it (an image that may end inside a
// batch), then publishes nothing until the EndTransactionRecord, even
// across HandleCommits; an AbortTransactionRecord drops what the
// transaction replayed, so the next image is the one before it with a
// later offset. A marker out of place (a Begin inside a transaction, an
// End or Abort outside one) is counted as a load error, logged and
// ignored, as on a Kafka broker. Snapshots hold no markers; one in a
// snapshot is a load error, and loading a snapshot ends any transaction.
// SnapshotRecords writes the last image that ends a batch.
//
// A record that does not decode, or that contradicts the image it is
// replayed on, stops the loader at that record: it publishes every record
// before it (none of an unfinished transaction) and nothing after, counts
// a load error, and reports an Event naming the offset and the record's
// type. Kafka's broker
// counts the error and goes on past the record; a kraftlab node that
// skipped a record would teach a state the log does not hold.
//
// SnapshotRecords writes the published image back as records (the last
// one that ends a batch), at the offset after the last one it holds: the
// snapshots the raft client takes are the loader's image.
package loader
