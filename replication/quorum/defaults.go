package quorum

import "time"

// Kafka's defaults of the snapshot policy (QuorumConfig / KRaftConfigs),
// for callers that want them; Config's zero values never snapshot.
const (
	// DefaultSnapshotMaxNewBytes is
	// metadata.log.max.record.bytes.between.snapshots' default, 20 MiB.
	DefaultSnapshotMaxNewBytes = 20 << 20
	// DefaultSnapshotMaxInterval is metadata.log.max.snapshot.interval.ms'
	// default, one hour.
	DefaultSnapshotMaxInterval = time.Hour
)
