package loader

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// ManifestKind says what made an image: log batches or a snapshot.
type ManifestKind uint8

// Manifest kinds, as Kafka's LogDeltaManifest and SnapshotManifest.
const (
	// LogDelta: committed log batches replayed on the previous image.
	LogDelta ManifestKind = iota + 1
	// SnapshotLoad: a snapshot replaced the previous image.
	SnapshotLoad
)

// String names the kind, e.g. "log delta".
func (k ManifestKind) String() string {
	switch k {
	case LogDelta:
		return "log delta"
	case SnapshotLoad:
		return "snapshot"
	}
	return fmt.Sprintf("ManifestKind(%d)", k)
}

// Manifest says what made a published image (Kafka's LoaderManifest).
type Manifest struct {
	Kind ManifestKind
	// Provenance is the new image's: the last offset it holds, that
	// record's epoch and append time.
	Provenance image.MetadataProvenance
	// Leader is the raft client's leader when the image was published.
	Leader raft.LeaderAndEpoch
	// Elapsed is how long decoding, replaying and applying took.
	Elapsed time.Duration

	// LogDelta: the batches (control batches included) and metadata
	// records replayed, and the first offset of the first batch.
	Batches     int
	Records     int
	FirstOffset int64
	// Bytes is the size of the batches on the log.
	Bytes int64

	// SnapshotLoad: the snapshot loaded and its record count.
	Snapshot        raft.SnapshotID
	SnapshotRecords int
}
