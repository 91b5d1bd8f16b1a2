package record

// The named values of record fields: Kafka's enums and the sentinels its
// schemas give meaning to. The fields themselves are generated from the
// schema table (records_gen.go).

// Security protocol ids (Kafka's SecurityProtocol), BrokerEndpoint's
// SecurityProtocol.
const (
	SecurityProtocolPlaintext int16 = 0
	SecurityProtocolSSL       int16 = 1
	SecurityProtocolSASLPlain int16 = 2
	SecurityProtocolSASLSSL   int16 = 3
)

// Values of BrokerRegistrationChangeRecord.Fenced (Kafka's
// BrokerRegistrationFencingChange).
const (
	FencingUnfence  int8 = -1
	FencingNoChange int8 = 0
	FencingFence    int8 = 1
)

// Values of BrokerRegistrationChangeRecord.InControlledShutdown (Kafka's
// BrokerRegistrationInControlledShutdownChange).
const (
	ControlledShutdownNoChange int8 = 0
	ControlledShutdownBegin    int8 = 1
)

// Config resource types (Kafka's ConfigResource.Type ids), ConfigRecord's
// ResourceType.
const (
	ResourceUnknown       int8 = 0
	ResourceTopic         int8 = 2
	ResourceBroker        int8 = 4
	ResourceBrokerLogger  int8 = 8
	ResourceClientMetrics int8 = 16
	ResourceGroup         int8 = 32
)

// MetadataVersionFeature is the feature whose level is the cluster's
// metadata.version (MetadataVersion.FEATURE_NAME).
const MetadataVersionFeature = "metadata.version"

// EligibleLeaderReplicasFeature is the feature that turns on eligible
// leader replicas (KIP-966) at level EligibleLeaderReplicasOn
// (EligibleLeaderReplicasVersion.FEATURE_NAME); kafka-storage format
// writes that level by default in Kafka 4.4.
const EligibleLeaderReplicasFeature = "eligible.leader.replicas.version"

// Levels of EligibleLeaderReplicasFeature (ELRV_0, ELRV_1).
const (
	EligibleLeaderReplicasOff int16 = 0
	EligibleLeaderReplicasOn  int16 = 1
)

// Metadata versions by feature level (Kafka's MetadataVersion).
const (
	// MetadataVersionMinimum is IBP_3_3_IV3, the lowest Kafka 4.x reads.
	MetadataVersionMinimum int16 = 7
	// MetadataVersion4_4IV2 is Kafka 4.4's LATEST_PRODUCTION, the level
	// whose record versions kraftlab writes.
	MetadataVersion4_4IV2 int16 = 33
)

// SCRAM mechanisms by type (Kafka's ScramMechanism).
const (
	ScramSHA256 int8 = 1
	ScramSHA512 int8 = 2
)

// Leader values of PartitionRecord and PartitionChangeRecord.
const (
	// NoLeader: the partition has no leader.
	NoLeader int32 = -1
	// NoLeaderChange: a PartitionChangeRecord leaves the leader as it is
	// (the default of its Leader field).
	NoLeaderChange int32 = -2
)

// Leader recovery states (Kafka's LeaderRecoveryState).
const (
	// LeaderRecovered: the leader was elected from the ISR, or has
	// recovered from an unclean election.
	LeaderRecovered int8 = 0
	// LeaderRecovering: an unclean election chose the leader and it is
	// still recovering.
	LeaderRecovering int8 = 1
	// LeaderRecoveryNoChange: a PartitionChangeRecord leaves the state as
	// it is (its default).
	LeaderRecoveryNoChange int8 = -1
)

// NewPartitionChangeRecord returns a change of partition p of topic that
// changes nothing yet, at the version Kafka 4.4 writes. It is written by
// hand because Go's zero value of Leader and LeaderRecoveryState is a
// change, not the schema's "no change" default.
func NewPartitionChangeRecord(topic Uuid, p int32) *PartitionChangeRecord {
	return &PartitionChangeRecord{
		Version:             PartitionChangeVersion,
		PartitionID:         p,
		TopicID:             topic,
		Leader:              NoLeaderChange,
		LeaderRecoveryState: LeaderRecoveryNoChange,
	}
}
