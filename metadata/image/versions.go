package image

import "github.com/kraftlab/kraftlab/metadata/record"

// Feature levels of metadata.version where record versions change
// (Kafka's MetadataVersion).
const (
	mv3_5IV2 int16 = 11 // SCRAM credentials: UserScramCredentialRecord
	mv3_4IV0 int16 = 8  // RegisterBrokerRecord v2 (IsMigratingZkBroker)
	mv3_7IV0 int16 = 15 // controller registration: RegisterControllerRecord v0
	mv3_7IV2 int16 = 17 // directory assignment: RegisterBrokerRecord v3, PartitionRecord v1
	mv4_0IV1 int16 = 23 // ELR: PartitionRecord v2
	mv4_3IV0 int16 = 30 // cordoned log dirs: RegisterBrokerRecord v4
)

// partitionRecordVersion is Kafka's MetadataVersion.partitionRecordVersion;
// mv 0 (none set) means kraftlab's own, the newest.
func partitionRecordVersion(mv int16) int16 {
	switch {
	case mv == 0 || mv >= mv4_0IV1:
		return record.PartitionVersion
	case mv >= mv3_7IV2:
		return 1
	}
	return 0
}

// registerBrokerRecordVersion is MetadataVersion.registerBrokerRecordVersion.
func registerBrokerRecordVersion(mv int16) int16 {
	switch {
	case mv == 0 || mv >= mv4_3IV0:
		return record.RegisterBrokerVersion
	case mv >= mv3_7IV2:
		return 3
	case mv >= mv3_4IV0:
		return 2
	}
	return 1
}
