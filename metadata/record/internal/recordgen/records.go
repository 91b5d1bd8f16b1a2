package main

// The schema table: every metadata record package record reads and writes,
// as Kafka 4.4's schemas define them. To add a field or a record, add it
// here in schema order and run go generate in metadata/record.

var structs = []Struct{
	{
		Name:  "BrokerEndpoint",
		About: "is one listener of a broker (RegisterBrokerRecord's EndPoints).",
		Fields: []Field{
			{Name: "Name", Type: "string", About: `is the listener name, e.g. "PLAINTEXT".`},
			{Name: "Host", Type: "string", About: "is the host name or address clients connect to."},
			{Name: "Port", Type: "uint16", About: "is the listener's port."},
			{Name: "SecurityProtocol", Type: "int16", About: "is the listener's security protocol, one of the SecurityProtocol values."},
		},
	},
	{
		Name:  "BrokerFeature",
		About: "is a feature range a broker supports (RegisterBrokerRecord's Features).",
		Fields: []Field{
			{Name: "Name", Type: "string", About: "is the feature's name, e.g. metadata.version."},
			{Name: "MinSupportedVersion", Type: "int16", About: "is the lowest level the node supports."},
			{Name: "MaxSupportedVersion", Type: "int16", About: "is the highest level the node supports."},
		},
	},
	{
		Name:  "ControllerEndpoint",
		Alias: "BrokerEndpoint",
		About: `is one listener of a controller (RegisterControllerRecord's EndPoints; Name is the listener name, e.g. "CONTROLLER"). Kafka's schema spells it as a broker's endpoint.`,
	},
	{
		Name:  "ControllerFeature",
		Alias: "BrokerFeature",
		About: "is a feature range a controller supports (RegisterControllerRecord's Features), spelled as a broker's.",
	},
}

var records = []Record{
	{
		Name: "RegisterBrokerRecord", APIKey: 0, MaxVersion: 4,
		About:        "registers a broker incarnation: the controller writes it when it accepts a BrokerRegistration request. Kafka's schema defaults Fenced to true; Go's zero value is false, so set it.",
		VersionAbout: "Kafka 4.4 writes RegisterBrokerVersion.",
		Fields: []Field{
			{Name: "BrokerId", Type: "int32", About: "is the broker's node id."},
			{Name: "IsMigratingZkBroker", Type: "bool", Since: 2, About: "is true for a ZooKeeper broker in migration mode; a KRaft broker leaves it false."},
			{Name: "IncarnationId", Type: "uuid", About: "identifies this start of the broker process."},
			{Name: "BrokerEpoch", Type: "int64", About: "is the epoch the controller gave this registration."},
			{Name: "EndPoints", Type: "[]BrokerEndpoint", About: "are the broker's listeners."},
			{Name: "Features", Type: "[]BrokerFeature", About: "are the feature ranges the broker supports."},
			{Name: "Rack", Type: "string", Nullable: true, About: "is the broker's rack, nil if it has none."},
			{Name: "Fenced", Type: "bool", Default: "true", About: "is true while the broker is fenced."},
			{Name: "InControlledShutdown", Type: "bool", Since: 1, About: "is true while the broker shuts down under control."},
			{Name: "LogDirs", Type: "[]uuid", Since: 3, Tag: tag(0), About: "are the broker's online log directories."},
			{Name: "CordonedLogDirs", Type: "[]uuid", Since: 4, Tag: tag(1), Nullable: true, About: "are its cordoned log directories, nil (null) until the broker reports them."},
		},
	},
	{
		Name: "UnregisterBrokerRecord", APIKey: 1,
		About: "removes a broker's registration.",
		Fields: []Field{
			{Name: "BrokerId", Type: "int32", About: "is the broker's node id."},
			{Name: "BrokerEpoch", Type: "int64", About: "is the epoch of the registration it removes."},
		},
	},
	{
		Name: "TopicRecord", APIKey: 2,
		About: "creates a topic; its partitions follow as PartitionRecords.",
		Fields: []Field{
			{Name: "Name", Type: "string", About: "is the topic's name."},
			{Name: "TopicId", Type: "uuid", About: "is the topic's id."},
		},
	},
	{
		Name: "PartitionRecord", APIKey: 3, MaxVersion: 2,
		About:        "creates a partition, or in a snapshot states it whole. Version 1 added Directories (KIP-858), version 2 the eligible leader replicas (KIP-966).",
		VersionAbout: "Kafka 4.4 writes PartitionVersion.",
		Fields: []Field{
			{Name: "PartitionId", Type: "int32", Default: "-1", About: "is the partition's index in its topic."},
			{Name: "TopicId", Type: "uuid", About: "is the id of the partition's topic."},
			{Name: "Replicas", Type: "[]int32", About: "are the replicas' broker ids, in preferred order."},
			{Name: "Isr", Type: "[]int32", About: "are the in-sync replicas."},
			{Name: "RemovingReplicas", Type: "[]int32", About: "are the replicas a reassignment removes."},
			{Name: "AddingReplicas", Type: "[]int32", About: "are the replicas a reassignment adds."},
			{Name: "Leader", Type: "int32", Default: "NoLeader", About: "is the leader's broker id, NoLeader if none."},
			{Name: "LeaderRecoveryState", Type: "int8", Tag: tag(0), About: "is LeaderRecovered or LeaderRecovering."},
			{Name: "LeaderEpoch", Type: "int32", Default: "-1", About: "is the leader's epoch."},
			{Name: "PartitionEpoch", Type: "int32", Default: "-1", About: "counts the changes of the partition."},
			{Name: "Directories", Type: "[]uuid", Since: 1, About: "holds each replica's log directory, in Replicas' order."},
			{Name: "EligibleLeaderReplicas", Type: "[]int32", Since: 2, Tag: tag(1), Nullable: true, About: "are the replicas outside the ISR that may still be elected cleanly (KIP-966), nil when absent."},
			{Name: "LastKnownElr", Type: "[]int32", Since: 2, Tag: tag(2), Nullable: true, About: "are the last known eligible leader replicas, nil when absent."},
		},
	},
	{
		Name: "ConfigRecord", APIKey: 4,
		About: "sets one configuration key of a resource (a topic, a broker, or the cluster default: a broker with an empty name). A nil Value deletes the key.",
		Fields: []Field{
			{Name: "ResourceType", Type: "int8", About: "is the kind of resource, one of the Resource values."},
			{Name: "ResourceName", Type: "string", About: "names the resource; empty for the cluster default."},
			{Name: "Name", Type: "string", About: "is the configuration key."},
			{Name: "Value", Type: "string", Nullable: true, About: "is the key's value, nil to delete the key."},
		},
	},
	{
		Name: "PartitionChangeRecord", APIKey: 5, MaxVersion: 2,
		About:        `changes a partition: the controller writes it for leader elections, ISR changes (AlterPartition) and reassignments. Every change is a tagged field whose default means "no change": nil lists, Leader NoLeaderChange, LeaderRecoveryState LeaderRecoveryNoChange. Go's zero value is not that default; start from NewPartitionChangeRecord.`,
		VersionAbout: "Kafka 4.4 writes PartitionChangeVersion.",
		Fields: []Field{
			{Name: "PartitionId", Type: "int32", Default: "-1", About: "is the partition's index in its topic."},
			{Name: "TopicId", Type: "uuid", About: "is the id of the partition's topic."},
			{Name: "Isr", Type: "[]int32", Tag: tag(0), Nullable: true, About: "is the new ISR, nil if it did not change."},
			{Name: "Leader", Type: "int32", Tag: tag(1), Default: "NoLeaderChange", About: "is the new leader: a broker id, NoLeader, or NoLeaderChange."},
			{Name: "Replicas", Type: "[]int32", Tag: tag(2), Nullable: true, About: "are the new replicas, nil if they did not change."},
			{Name: "RemovingReplicas", Type: "[]int32", Tag: tag(3), Nullable: true, About: "are the replicas a reassignment now removes, nil if they did not change."},
			{Name: "AddingReplicas", Type: "[]int32", Tag: tag(4), Nullable: true, About: "are the replicas a reassignment now adds, nil if they did not change."},
			{Name: "LeaderRecoveryState", Type: "int8", Tag: tag(5), Default: "LeaderRecoveryNoChange", About: "is the new recovery state: LeaderRecovered, LeaderRecovering, or LeaderRecoveryNoChange."},
			{Name: "Directories", Type: "[]uuid", Since: 1, Tag: tag(8), Nullable: true, About: "are the replicas' new log directories, nil if they did not change."},
			{Name: "EligibleLeaderReplicas", Type: "[]int32", Since: 2, Tag: tag(6), Nullable: true, About: "are the new eligible leader replicas, nil if they did not change."},
			{Name: "LastKnownElr", Type: "[]int32", Since: 2, Tag: tag(7), Nullable: true, About: "are the new last known eligible leader replicas, nil if they did not change."},
		},
	},
	{
		Name: "FenceBrokerRecord", APIKey: 7,
		About: "fences a broker. Kafka 4.x's controller no longer writes it (it writes BrokerRegistrationChangeRecord with Fenced = FencingFence), but a log may hold it.",
		Fields: []Field{
			{Name: "Id", Type: "int32", About: "is the broker's node id."},
			{Name: "Epoch", Type: "int64", About: "is the broker's epoch."},
		},
	},
	{
		Name: "UnfenceBrokerRecord", APIKey: 8,
		About: "unfences a broker; like FenceBrokerRecord, read but no longer written by Kafka 4.x.",
		Fields: []Field{
			{Name: "Id", Type: "int32", About: "is the broker's node id."},
			{Name: "Epoch", Type: "int64", About: "is the broker's epoch."},
		},
	},
	{
		Name: "RemoveTopicRecord", APIKey: 9,
		About: "deletes a topic with all its partitions (and, on replay, its configs).",
		Fields: []Field{
			{Name: "TopicId", Type: "uuid", About: "is the id of the topic to delete."},
		},
	},
	{
		Name: "UserScramCredentialRecord", APIKey: 11,
		About: "stores a user's SCRAM credential for one mechanism: what kafka-storage format --add-scram and AlterUserScramCredentials write, and what a Kafka controller's listener authenticates SCRAM clients (a kraftlab raft client among them) against.",
		Fields: []Field{
			{Name: "Name", Type: "string", About: "is the user's name."},
			{Name: "Mechanism", Type: "int8", About: "is ScramSHA256 or ScramSHA512."},
			{Name: "Salt", Type: "bytes", About: "is the salt the credential was derived with."},
			{Name: "StoredKey", Type: "bytes", About: "is SCRAM's StoredKey, against which the server checks a client's proof."},
			{Name: "ServerKey", Type: "bytes", About: "is SCRAM's ServerKey, with which the server proves itself to the client."},
			{Name: "Iterations", Type: "int32", About: "is the SCRAM iteration count."},
		},
	},
	{
		Name: "FeatureLevelRecord", APIKey: 12,
		About: "finalizes a feature at a level; level 0 removes the feature. Its version can never move past 0: the first record of a log or snapshot is one, and any reader must read it.",
		Fields: []Field{
			{Name: "Name", Type: "string", About: "is the feature's name, e.g. MetadataVersionFeature."},
			{Name: "FeatureLevel", Type: "int16", About: "is the finalized level; 0 removes the feature."},
		},
	},
	{
		Name: "ProducerIdsRecord", APIKey: 15,
		About: "hands a block of producer ids to a broker: the active controller writes one per AllocateProducerIds, and NextProducerID is the first id of the block after it, so replaying the log tells every controller where the next block starts.",
		Fields: []Field{
			{Name: "BrokerId", Type: "int32", About: "is the broker the block went to."},
			{Name: "BrokerEpoch", Type: "int64", Default: "-1", About: "is that broker's epoch when it asked."},
			{Name: "NextProducerId", Type: "int64", About: "is the first id not yet handed out."},
		},
	},
	{
		Name: "BrokerRegistrationChangeRecord", APIKey: 17, MaxVersion: 3,
		About:        "changes a registered broker: fencing, controlled shutdown, log directories. Kafka 4.x's controller fences and unfences with it at version 0 (ReplicationControlManager.handleBrokerFenced/handleBrokerUnfenced), marks controlled shutdown at version 1, online log directories at 2 and cordoned ones at 3. All four changes are tagged fields.",
		VersionAbout: "It depends on the change: BrokerFencingChangeVersion, BrokerShutdownChangeVersion, BrokerLogDirsChangeVersion or BrokerCordonedChangeVersion.",
		Fields: []Field{
			{Name: "BrokerId", Type: "int32", About: "is the broker's node id."},
			{Name: "BrokerEpoch", Type: "int64", About: "is the epoch of the registration it changes."},
			{Name: "Fenced", Type: "int8", Tag: tag(0), About: "is FencingUnfence, FencingNoChange or FencingFence."},
			{Name: "InControlledShutdown", Type: "int8", Since: 1, Tag: tag(1), About: "is ControlledShutdownNoChange or ControlledShutdownBegin."},
			{Name: "LogDirs", Type: "[]uuid", Since: 2, Tag: tag(2), About: "are the broker's online log directories; empty means no change."},
			{Name: "CordonedLogDirs", Type: "[]uuid", Since: 3, Tag: tag(3), Nullable: true, About: "are its cordoned log directories; nil means no change."},
		},
	},
	{
		Name: "NoOpRecord", APIKey: 20,
		About: "carries nothing: the active controller writes one periodically so that the high watermark, and every observer's applied offset, keep moving while nothing changes.",
	},
	{
		Name: "RemoveUserScramCredentialRecord", APIKey: 22,
		About: "deletes a user's credential for one mechanism.",
		Fields: []Field{
			{Name: "Name", Type: "string", About: "is the user's name."},
			{Name: "Mechanism", Type: "int8", About: "is ScramSHA256 or ScramSHA512."},
		},
	},
	{
		Name: "BeginTransactionRecord", APIKey: 23,
		About: "opens a metadata transaction (KIP-868): the records up to the matching EndTransactionRecord are applied as one unit, or not at all if an AbortTransactionRecord comes first. Kafka's controller writes its bootstrap records, and any change too big for one batch, inside one.",
		Fields: []Field{
			{Name: "Name", Type: "string", Tag: tag(0), Nullable: true, About: "describes the transaction, nil if it has no description."},
		},
	},
	{
		Name: "EndTransactionRecord", APIKey: 24,
		About: "commits the open metadata transaction.",
	},
	{
		Name: "AbortTransactionRecord", APIKey: 25,
		About: "abandons the open metadata transaction: what it replayed is discarded. A newly elected Kafka controller writes one when the log ends inside a transaction its predecessor did not finish.",
		Fields: []Field{
			{Name: "Reason", Type: "string", Tag: tag(0), Nullable: true, About: "says why, nil if no reason was given."},
		},
	},
	{
		Name: "RegisterControllerRecord", APIKey: 27,
		About: "registers a controller incarnation (KIP-919): a Kafka controller writes it for itself once it sees metadata.version 3.7-IV0 or later, so that brokers and other controllers learn its listeners and supported features from the log. kraftlab's own controllers never write it (their quorum is static).",
		Fields: []Field{
			{Name: "ControllerId", Type: "int32", About: "is the controller's node id."},
			{Name: "IncarnationId", Type: "uuid", About: "identifies this start of the controller process."},
			{Name: "ZkMigrationReady", Type: "bool", About: "is true when the controller is configured for a ZooKeeper migration."},
			{Name: "EndPoints", Type: "[]ControllerEndpoint", About: "are the controller's listeners."},
			{Name: "Features", Type: "[]ControllerFeature", About: "are the feature ranges the controller supports."},
		},
	},
	{
		Name: "UnregisterControllerRecord", APIKey: 29,
		About: "removes a controller's registration; Kafka writes it from metadata.version 4.4-IV2 when a controller leaves the quorum.",
		Fields: []Field{
			{Name: "ControllerId", Type: "int32", About: "is the controller's node id."},
		},
	},
}
