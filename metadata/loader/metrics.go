package loader

// Metrics are the loader's counters, named (in JSON) after Kafka's
// MetadataLoader metrics (CurrentMetadataVersion, HandleLoadSnapshotCount)
// and a broker's broker-metadata-metrics; kraftlab keeps them on every
// node, controllers included.
type Metrics struct {
	// CurrentMetadataVersion is the image's metadata.version feature
	// level, 0 while the log has set none.
	CurrentMetadataVersion int16 `json:"current-metadata-version"`
	// HandleLoadSnapshotCount counts the snapshots loaded.
	HandleLoadSnapshotCount int64 `json:"handle-load-snapshot-count"`
	// LastAppliedRecordOffset is the offset of the last record the
	// published image holds, -1 before the first.
	LastAppliedRecordOffset int64 `json:"last-applied-record-offset"`
	// LastAppliedRecordTimestamp is that record's batch's append time,
	// Unix milliseconds; -1 before the first.
	LastAppliedRecordTimestamp int64 `json:"last-applied-record-timestamp"`
	// LastAppliedRecordLagMs is now minus LastAppliedRecordTimestamp, as
	// of the call to Metrics; 0 before the first record.
	LastAppliedRecordLagMs int64 `json:"last-applied-record-lag-ms"`
	// MetadataLoadErrorCount counts the records and snapshots that could
	// not be decoded or replayed, each of which stops the loader, and the
	// transaction markers out of place, which it goes past.
	MetadataLoadErrorCount int64 `json:"metadata-load-error-count"`
	// MetadataApplyErrorCount counts the publishers that failed (panicked)
	// on an image they were handed.
	MetadataApplyErrorCount int64 `json:"metadata-apply-error-count"`
}
