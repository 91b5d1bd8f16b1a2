package node

import "github.com/kraftlab/kraftlab/metadata/record"

// metadataVersions are the names of Kafka 4.4's metadata.version levels
// (MetadataVersion's ibpVersion, "<release>-IV<n>"), from
// record.MetadataVersionMinimum (7, IBP_3_3_IV3) on.
var metadataVersions = [...]string{
	"3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2",
	"3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0",
	"4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1",
	"4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4-IV2",
}

// MetadataVersionName is the name Kafka gives metadata.version feature
// level level, e.g. "4.4-IV2" for 33, and false for a level Kafka 4.4 does
// not have.
func MetadataVersionName(level int16) (string, bool) {
	i := int(level) - int(record.MetadataVersionMinimum)
	if i < 0 || i >= len(metadataVersions) {
		return "", false
	}
	return metadataVersions[i], true
}
