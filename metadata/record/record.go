package record

import "fmt"

// APIKey identifies a metadata record type (Kafka's MetadataRecordType id).
type APIKey uint16

// The apiKeys of the records this package knows (metadata/*.json "apiKey").
const (
	KeyRegisterBroker            APIKey = 0
	KeyUnregisterBroker          APIKey = 1
	KeyTopic                     APIKey = 2
	KeyPartition                 APIKey = 3
	KeyConfig                    APIKey = 4
	KeyPartitionChange           APIKey = 5
	KeyFenceBroker               APIKey = 7
	KeyUnfenceBroker             APIKey = 8
	KeyRemoveTopic               APIKey = 9
	KeyUserScramCredential       APIKey = 11
	KeyFeatureLevel              APIKey = 12
	KeyProducerIds               APIKey = 15
	KeyBrokerRegistrationChange  APIKey = 17
	KeyNoOp                      APIKey = 20
	KeyRemoveUserScramCredential APIKey = 22
	KeyBeginTransaction          APIKey = 23
	KeyEndTransaction            APIKey = 24
	KeyAbortTransaction          APIKey = 25
	KeyRegisterController        APIKey = 27
	KeyUnregisterController      APIKey = 29
)

// Record is one metadata record: a Go type per Kafka record, encoded at the
// version its Version field names.
type Record interface {
	// APIKey is the record's type.
	APIKey() APIKey
	// RecordVersion is the version the record is (to be) encoded at.
	RecordVersion() int16
	// encode appends the body at the record's version.
	encode(w *writer)
	// decode reads the body at version v.
	decode(r *reader, v int16)
}

// keyInfo is what Decode needs to know of a record type.
type keyInfo struct {
	name       string
	maxVersion int16 // validVersions' upper end on Kafka's trunk
	new        func() Record
}

var keys = map[APIKey]keyInfo{
	KeyRegisterBroker:            {"RegisterBrokerRecord", 4, func() Record { return new(RegisterBrokerRecord) }},
	KeyUnregisterBroker:          {"UnregisterBrokerRecord", 0, func() Record { return new(UnregisterBrokerRecord) }},
	KeyTopic:                     {"TopicRecord", 0, func() Record { return new(TopicRecord) }},
	KeyPartition:                 {"PartitionRecord", 2, func() Record { return new(PartitionRecord) }},
	KeyConfig:                    {"ConfigRecord", 0, func() Record { return new(ConfigRecord) }},
	KeyPartitionChange:           {"PartitionChangeRecord", 2, func() Record { return new(PartitionChangeRecord) }},
	KeyFenceBroker:               {"FenceBrokerRecord", 0, func() Record { return new(FenceBrokerRecord) }},
	KeyUnfenceBroker:             {"UnfenceBrokerRecord", 0, func() Record { return new(UnfenceBrokerRecord) }},
	KeyRemoveTopic:               {"RemoveTopicRecord", 0, func() Record { return new(RemoveTopicRecord) }},
	KeyUserScramCredential:       {"UserScramCredentialRecord", 0, func() Record { return new(UserScramCredentialRecord) }},
	KeyRemoveUserScramCredential: {"RemoveUserScramCredentialRecord", 0, func() Record { return new(RemoveUserScramCredentialRecord) }},
	KeyFeatureLevel:              {"FeatureLevelRecord", 0, func() Record { return new(FeatureLevelRecord) }},
	KeyProducerIds:               {"ProducerIdsRecord", 0, func() Record { return new(ProducerIdsRecord) }},
	KeyBrokerRegistrationChange:  {"BrokerRegistrationChangeRecord", 3, func() Record { return new(BrokerRegistrationChangeRecord) }},
	KeyNoOp:                      {"NoOpRecord", 0, func() Record { return new(NoOpRecord) }},
	KeyBeginTransaction:          {"BeginTransactionRecord", 0, func() Record { return new(BeginTransactionRecord) }},
	KeyEndTransaction:            {"EndTransactionRecord", 0, func() Record { return new(EndTransactionRecord) }},
	KeyAbortTransaction:          {"AbortTransactionRecord", 0, func() Record { return new(AbortTransactionRecord) }},
	KeyRegisterController:        {"RegisterControllerRecord", 0, func() Record { return new(RegisterControllerRecord) }},
	KeyUnregisterController:      {"UnregisterControllerRecord", 0, func() Record { return new(UnregisterControllerRecord) }},
}

// String is the record type's name in Kafka, or "apiKey N" for one this
// package does not know.
func (k APIKey) String() string {
	if i, ok := keys[k]; ok {
		return i.name
	}
	return fmt.Sprintf("apiKey %d", uint16(k))
}

// MaxVersion is the highest version of the record type that Decode reads
// (the schema's validVersions), and false for an unknown type.
func (k APIKey) MaxVersion() (int16, bool) {
	i, ok := keys[k]
	return i.maxVersion, ok
}

// Name is the Kafka name of r's type, e.g. "PartitionChangeRecord".
func Name(r Record) string { return r.APIKey().String() }
