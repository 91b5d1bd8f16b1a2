package controller

import "github.com/kraftlab/kraftlab/metadata/record"

// Feature levels of metadata.version at which the records the controller
// writes change version (Kafka's MetadataVersion).
const (
	mv3_4IV0 int16 = 8  // RegisterBrokerRecord v2
	mv3_7IV2 int16 = 17 // directory assignment: RegisterBrokerRecord v3, PartitionRecord/PartitionChangeRecord v1
	mv4_0IV1 int16 = 23 // ELR fields: PartitionRecord/PartitionChangeRecord v2
	mv4_3IV0 int16 = 30 // cordoned log dirs: RegisterBrokerRecord v4
)

// bootstrapMetadataVersion is the level an empty log is bootstrapped at:
// Kafka 4.4's LATEST_PRODUCTION, the level kraftlab models.
const bootstrapMetadataVersion = record.MetadataVersion4_4IV2

// versions are the record versions a metadata.version calls for
// (MetadataVersion.registerBrokerRecordVersion, partitionRecordVersion,
// partitionChangeRecordVersion).
type versions struct {
	registerBroker    int16
	partition         int16
	partitionChange   int16
	directoriesInRecs bool // isDirectoryAssignmentSupported
}

func versionsFor(mv int16) versions {
	var v versions
	switch {
	case mv >= mv4_3IV0:
		v.registerBroker = record.RegisterBrokerVersion
	case mv >= mv3_7IV2:
		v.registerBroker = 3
	case mv >= mv3_4IV0:
		v.registerBroker = 2
	default:
		v.registerBroker = 1
	}
	switch {
	case mv >= mv4_0IV1:
		v.partition, v.partitionChange = record.PartitionVersion, record.PartitionChangeVersion
	case mv >= mv3_7IV2:
		v.partition, v.partitionChange = 1, 1
	}
	v.directoriesInRecs = mv >= mv3_7IV2
	return v
}
