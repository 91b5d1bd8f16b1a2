package record

// MetadataVersionFeature is the feature whose level is the cluster's
// metadata.version (MetadataVersion.FEATURE_NAME).
const MetadataVersionFeature = "metadata.version"

// Metadata versions by feature level (Kafka's MetadataVersion).
const (
	// MetadataVersionMinimum is IBP_3_3_IV3, the lowest Kafka 4.x reads.
	MetadataVersionMinimum int16 = 7
	// MetadataVersion4_4IV2 is Kafka 4.4's LATEST_PRODUCTION, the level
	// whose record versions kraftlab writes.
	MetadataVersion4_4IV2 int16 = 33
)

// FeatureLevelRecord (apiKey 12, version 0) finalizes a feature at a level;
// level 0 removes the feature. Its version can never move past 0: the
// first record of a log or snapshot is one, and any reader must read it.
type FeatureLevelRecord struct {
	Version      int16
	Name         string
	FeatureLevel int16
}

// APIKey is KeyFeatureLevel.
func (*FeatureLevelRecord) APIKey() APIKey { return KeyFeatureLevel }

// RecordVersion is r.Version.
func (r *FeatureLevelRecord) RecordVersion() int16 { return r.Version }

func (r *FeatureLevelRecord) encode(w *writer) {
	w.string("Name", r.Name)
	w.int16(r.FeatureLevel)
	w.uvarint(0)
}

func (r *FeatureLevelRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.Name = rd.string("Name")
	r.FeatureLevel = rd.int16()
	rd.noTags()
}

// NoOpRecord (apiKey 20, version 0) carries nothing: the active controller
// writes one periodically so that the high watermark, and every observer's
// applied offset, keep moving while nothing changes.
type NoOpRecord struct {
	Version int16
}

// APIKey is KeyNoOp.
func (*NoOpRecord) APIKey() APIKey { return KeyNoOp }

// RecordVersion is r.Version.
func (r *NoOpRecord) RecordVersion() int16 { return r.Version }

func (r *NoOpRecord) encode(w *writer) { w.uvarint(0) }

func (r *NoOpRecord) decode(rd *reader, v int16) {
	r.Version = v
	rd.noTags()
}
