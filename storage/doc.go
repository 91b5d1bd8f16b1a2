// Package storage holds kraftlab's on-disk state the way Kafka lays it out:
// segmented logs of v2 record batches, the leader-epoch cache, snapshots and
// the quorum-state file.
//
// # Log directory
//
// A [Log] owns one directory:
//
//	00000000000000000000.log     batches from offset 0, byte for byte as on the wire
//	00000000000000000000.index   sparse offset index of that segment
//	00000000000000001234.log     the next segment, from offset 1234 (the active one)
//	00000000000000001234.index
//	leader-epoch-checkpoint      epoch → start offset (Kafka's format)
//	log-start-offset-checkpoint  the log start offset, once it has moved
//
// A segment rolls when the next batch would take it past
// [Options.SegmentBytes] (Kafka's segment.bytes). Its index holds one 8-byte
// entry (the batch's last offset relative to the segment's base, as Kafka
// keys it, and the batch's byte position) for a batch whenever more than
// [Options.IndexIntervalBytes] (index.interval.bytes) have been written
// since the previous entry; a lookup finds the closest entry and
// reads batch headers from there. Index entries are written to their file in
// groups (on roll and close, and on flush except under FlushNever), because
// the index can always be rebuilt from its segment; they name flushed
// batches only (a roll inside an unflushed append leaves the rest of the old
// segment's entries to the next flush), so that Open can take an entry past
// its segment's end for a flushed batch that is gone.
//
// Snapshots ([Snapshots]) and the quorum-state file ([QuorumStateFile]) may
// live in the same directory: their names do not collide with the log's.
//
// # Flushing
//
// [Log.LastFlushedOffset] is the end offset of the data the flush policy has
// made durable, and the offset [Log.Crash] keeps. The quorum relies on it:
// a replica may only report offsets below it as written.
//
//   - FlushAlways fsyncs inside every append, so the flushed offset is always
//     the log end offset.
//   - FlushInterval fsyncs inside an append when [Options.FlushInterval] has
//     passed since the last fsync, measured with [Options.Now]. There is no
//     background goroutine: an idle log stays unflushed until the next append
//     or [Log.Flush].
//   - FlushNever never fsyncs. [Log.Flush] still advances the flushed offset:
//     the data is with the operating system, so it survives the death of the
//     process but not a power cut.
//
// [Log.Flush] fsyncs now (except under FlushNever) and advances the flushed
// offset to the log end offset. [Log.Crash] closes the log as if the process
// had died at that moment: everything after the flushed offset is lost.
//
// # A full or failing disk
//
// Writes and fsyncs go through a [Disk]: [OS] in production, one that runs
// out of space in tests (package disktest). A segment write that fails part
// way is cut back to the last whole batch at once, so nothing builds on a
// torn batch; a failed fsync fails the log (the operating system may have
// dropped what it could not write), which then refuses everything until it
// is reopened, and a crash keeps only the flushed part. [FaultOf] names the
// trouble (disk full, read-only, other), [Describe] words an error that
// way, and [ProbeWrite] tells whether a folder takes writes again.
//
// # Recovery
//
// [Open] reads every segment once, checking each batch's length, magic,
// CRC-32C, offsets (contiguous across batches and segments) and leader epoch
// (never decreasing). The segments' indexes and the leader-epoch cache are
// checked against what the scan found and rebuilt when they differ.
//
// Damage is handled by where it is. A torn or corrupt tail — bytes after which
// no intact batch follows, in the last segment holding data — is what a crash
// leaves behind: it is cut off at the last good batch and described in
// [Log.Recovery]. Damage followed by an intact batch (or by a later segment
// holding data) is not a crash artefact, and cutting there would silently drop
// good records, so Open fails with [ErrCorruptLog] naming the file, the byte
// position and the offset — unless [Options.SetAsideDamage] says the log
// belongs to a replica that can fetch what it lost: then the damaged segment
// is kept whole as <segment>.log.corrupt, later segments holding data are
// renamed with that suffix, the log is cut at the first bad batch, and
// RecoveryReport.Lost and SetAside say what went. Nothing that reads bytes
// from disk panics on them.
//
// Open also reports evidence that records the log had flushed are gone,
// which a crash never explains: a first segment whose base offset says
// offsets below it existed while nothing holds them (no log start
// checkpoint, no snapshot), an epoch in leader-epoch-checkpoint starting past
// the recovered end, an index entry past its segment's end. Both files only
// ever name flushed batches, for this reason. RecoveryReport.Lost says how
// many at least (exactly, for the first kind).
//
// # Snapshots
//
// OpenSnapshots and Open check every snapshot file whole, as Freeze does:
// batches passing their CRC with offsets from zero, all in the epoch the file
// name gives, a SnapshotHeader first and a SnapshotFooter last. A corrupt one
// is renamed with a .corrupt suffix (kept for inspection, never listed) and
// reported in RecoveryReport.SnapshotsSetAside, unless it is the only copy of
// the offsets below the log start: then both fail with ErrCorruptSnapshot
// naming the file.
package storage
