package record

// The record versions Kafka 4.4 writes at its LATEST_PRODUCTION
// metadata.version, 4.4-IV2 (MetadataVersion.registerBrokerRecordVersion,
// partitionRecordVersion, partitionChangeRecordVersion, and the constants
// in ReplicationControlManager for BrokerRegistrationChangeRecord). Every
// other record here has only version 0.
const (
	RegisterBrokerVersion  int16 = 4
	PartitionVersion       int16 = 2
	PartitionChangeVersion int16 = 2
	// BrokerRegistrationChangeRecord's version depends on the change:
	// fencing and unfencing are written at 0, controlled shutdown at 1,
	// online log directories at 2, cordoned log directories at 3.
	BrokerFencingChangeVersion  int16 = 0
	BrokerShutdownChangeVersion int16 = 1
	BrokerLogDirsChangeVersion  int16 = 2
	BrokerCordonedChangeVersion int16 = 3
)
