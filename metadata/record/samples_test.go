package record

func str(s string) *string { return &s }

var (
	topicA = NewUuid(0x0102030405060708, 0x090a0b0c0d0e0f10)
	dirA   = NewUuid(0xaaaaaaaaaaaaaaaa, 0x1111111111111111)
	dirB   = NewUuid(0xbbbbbbbbbbbbbbbb, 0x2222222222222222)
)

// samples returns one populated record per type and version, every field
// set that the version carries. Non-nullable lists are non-nil, since
// Decode returns empty lists as empty slices.
func samples() []Record {
	var out []Record
	for v := int16(0); v <= 4; v++ {
		r := &RegisterBrokerRecord{
			Version: v, BrokerID: 101, IncarnationID: NewUuid(7, 8), BrokerEpoch: 42,
			EndPoints: []BrokerEndpoint{
				{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, SecurityProtocol: SecurityProtocolPlaintext},
				{Name: "SSL", Host: "localhost", Port: 65535, SecurityProtocol: SecurityProtocolSSL},
			},
			Features: []BrokerFeature{{Name: MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}},
			Rack:     str("rack-1"),
			Fenced:   true,
		}
		if v >= 1 {
			r.InControlledShutdown = true
		}
		if v >= 2 {
			r.IsMigratingZkBroker = true
		}
		if v >= 3 {
			r.LogDirs = []Uuid{dirA, dirB}
		}
		if v >= 4 {
			r.CordonedLogDirs = []Uuid{dirB}
		}
		out = append(out, r)
	}
	out = append(out,
		&RegisterBrokerRecord{Version: 4, BrokerID: 1, EndPoints: []BrokerEndpoint{}, Features: []BrokerFeature{}, CordonedLogDirs: []Uuid{}},
		&UnregisterBrokerRecord{BrokerID: 102, BrokerEpoch: 9},
		&FenceBrokerRecord{ID: 103, Epoch: 1 << 40},
		&UnfenceBrokerRecord{ID: 103, Epoch: -1},
	)
	for v := int16(0); v <= 3; v++ {
		r := &BrokerRegistrationChangeRecord{Version: v, BrokerID: 101, BrokerEpoch: 42, Fenced: FencingUnfence}
		if v >= 1 {
			r.InControlledShutdown = ControlledShutdownBegin
		}
		if v >= 2 {
			r.LogDirs = []Uuid{dirA}
		}
		if v >= 3 {
			r.CordonedLogDirs = []Uuid{}
		}
		out = append(out, r)
	}
	out = append(out,
		&BrokerRegistrationChangeRecord{BrokerID: 5, BrokerEpoch: 6},
		&TopicRecord{Name: "orders", TopicID: topicA},
		&TopicRecord{Name: "", TopicID: ZeroUuid},
		&RemoveTopicRecord{TopicID: topicA},
		&ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: str("1000")},
		&ConfigRecord{ResourceType: ResourceBroker, ResourceName: "", Name: "log.retention.ms", Value: nil},
		&ConfigRecord{ResourceType: ResourceBroker, ResourceName: "101", Name: "x", Value: str("")},
		&FeatureLevelRecord{Name: MetadataVersionFeature, FeatureLevel: MetadataVersion4_4IV2},
		&NoOpRecord{},
		&ProducerIdsRecord{BrokerID: 101, BrokerEpoch: 42, NextProducerID: 2000},
		&ProducerIdsRecord{BrokerID: 102, BrokerEpoch: -1, NextProducerID: 1 << 62},
	)
	for v := int16(0); v <= 2; v++ {
		r := &PartitionRecord{
			Version: v, PartitionID: 7, TopicID: topicA,
			Replicas: []int32{101, 102, 103}, Isr: []int32{101, 102},
			RemovingReplicas: []int32{103}, AddingReplicas: []int32{},
			Leader: 101, LeaderRecoveryState: LeaderRecovering, LeaderEpoch: 3, PartitionEpoch: 9,
		}
		if v >= 1 {
			r.Directories = []Uuid{dirA, dirB, DirectoryUnassigned}
		}
		if v >= 2 {
			r.EligibleLeaderReplicas = []int32{103}
			r.LastKnownElr = []int32{}
		}
		out = append(out, r)
	}
	for v := int16(0); v <= 2; v++ {
		r := &PartitionChangeRecord{
			Version: v, PartitionID: 7, TopicID: topicA,
			Isr: []int32{101}, Leader: NoLeader, Replicas: []int32{101, 102},
			RemovingReplicas: []int32{}, AddingReplicas: []int32{102},
			LeaderRecoveryState: LeaderRecovered,
		}
		if v >= 1 {
			r.Directories = []Uuid{dirA, dirB}
		}
		if v >= 2 {
			r.EligibleLeaderReplicas = []int32{102}
			r.LastKnownElr = []int32{101}
		}
		out = append(out, r)
	}
	out = append(out, NewPartitionChangeRecord(topicA, 0))
	out = append(out,
		&BeginTransactionRecord{Name: str("Bootstrap records")},
		&BeginTransactionRecord{},
		&BeginTransactionRecord{Name: str("")},
		&EndTransactionRecord{},
		&AbortTransactionRecord{Reason: str("controller failover")},
		&AbortTransactionRecord{},
		&RegisterControllerRecord{
			ControllerID: 3000, IncarnationID: NewUuid(9, 10), ZkMigrationReady: true,
			EndPoints: []ControllerEndpoint{{Name: "CONTROLLER", Host: "localhost", Port: 9093, SecurityProtocol: SecurityProtocolSASLPlain}},
			Features: []ControllerFeature{
				{Name: MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33},
				{Name: "kraft.version", MinSupportedVersion: 0, MaxSupportedVersion: 1},
			},
		},
		&RegisterControllerRecord{ControllerID: -1, EndPoints: []ControllerEndpoint{}, Features: []ControllerFeature{}},
		&UnregisterControllerRecord{ControllerID: 3000},
		&UserScramCredentialRecord{Name: "kraftlab-member", Mechanism: ScramSHA256, Salt: []byte("salt"),
			StoredKey: []byte{0, 1, 0xfe, 0xff}, ServerKey: []byte{9}, Iterations: 4096},
		&UserScramCredentialRecord{Name: "", Mechanism: ScramSHA512, Salt: []byte{}, StoredKey: []byte{}, ServerKey: []byte{}},
		&RemoveUserScramCredentialRecord{Name: "kraftlab-member", Mechanism: ScramSHA256},
	)
	return out
}
