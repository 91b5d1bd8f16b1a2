package record

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
)

// TypeName is the record type's name in Kafka's MetadataRecordType enum,
// e.g. "PARTITION_CHANGE_RECORD": the schema name in upper snake case, as
// kafka-dump-log prints it in "type".
func (k APIKey) TypeName() string {
	i, ok := keys[k]
	if !ok {
		return k.String()
	}
	return snakeUpper(i.name)
}

// snakeUpper is Kafka's generator's toSnakeCase, upper-cased: an underscore
// before each capital that follows a lower-case letter.
func snakeUpper(s string) string {
	var b strings.Builder
	prevUpper := true
	for _, c := range s {
		if unicode.IsUpper(c) {
			if !prevUpper {
				b.WriteByte('_')
			}
			prevUpper = true
		} else {
			prevUpper = false
		}
		b.WriteRune(unicode.ToUpper(c))
	}
	return b.String()
}

// JSON is r as Kafka's generated <Record>JsonConverter.write prints it at
// r's version: the schema's fields in schema order, named with a lower-case
// first letter; fields the version lacks left out; a tagged field only when
// it differs from its default; uuids in base64; null for a null nullable
// field. It fails, as the converter does, for a version the type does not
// have or a value the version cannot carry.
func JSON(r Record) ([]byte, error) {
	var w JSONWriter
	if err := AppendJSON(&w, r); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

// AppendJSON writes JSON(r) to w.
func AppendJSON(w *JSONWriter, r Record) error {
	k, v := r.APIKey(), r.RecordVersion()
	max, ok := k.MaxVersion()
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknown, k)
	}
	if v < 0 || v > max {
		return fmt.Errorf("%s: version %d is not one of 0-%d", k, v, max)
	}
	if err := checkVersion(r); err != nil {
		return fmt.Errorf("%s v%d: %w", k, v, err)
	}
	w.Begin()
	switch r := r.(type) {
	case *RegisterBrokerRecord:
		r.json(w)
	case *UnregisterBrokerRecord:
		w.Key("brokerId")
		w.Int(int64(r.BrokerID))
		w.Key("brokerEpoch")
		w.Int(r.BrokerEpoch)
	case *TopicRecord:
		w.Key("name")
		w.String(r.Name)
		w.Key("topicId")
		w.String(r.TopicID.String())
	case *PartitionRecord:
		r.json(w)
	case *ConfigRecord:
		w.Key("resourceType")
		w.Int(int64(r.ResourceType))
		w.Key("resourceName")
		w.String(r.ResourceName)
		w.Key("name")
		w.String(r.Name)
		w.Key("value")
		if r.Value == nil {
			w.Null()
		} else {
			w.String(*r.Value)
		}
	case *PartitionChangeRecord:
		r.json(w)
	case *FenceBrokerRecord:
		w.Key("id")
		w.Int(int64(r.ID))
		w.Key("epoch")
		w.Int(r.Epoch)
	case *UnfenceBrokerRecord:
		w.Key("id")
		w.Int(int64(r.ID))
		w.Key("epoch")
		w.Int(r.Epoch)
	case *RemoveTopicRecord:
		w.Key("topicId")
		w.String(r.TopicID.String())
	case *FeatureLevelRecord:
		w.Key("name")
		w.String(r.Name)
		w.Key("featureLevel")
		w.Int(int64(r.FeatureLevel))
	case *BrokerRegistrationChangeRecord:
		r.json(w)
	case *ProducerIdsRecord:
		r.json(w)
	case *NoOpRecord, *EndTransactionRecord:
	case *BeginTransactionRecord:
		optionalTextJSON(w, "name", r.Name)
	case *AbortTransactionRecord:
		optionalTextJSON(w, "reason", r.Reason)
	case *RegisterControllerRecord:
		r.json(w)
	case *UserScramCredentialRecord:
		w.Key("name")
		w.String(r.Name)
		w.Key("mechanism")
		w.Int(int64(r.Mechanism))
		w.Key("salt")
		w.String(base64.StdEncoding.EncodeToString(r.Salt))
		w.Key("storedKey")
		w.String(base64.StdEncoding.EncodeToString(r.StoredKey))
		w.Key("serverKey")
		w.String(base64.StdEncoding.EncodeToString(r.ServerKey))
		w.Key("iterations")
		w.Int(int64(r.Iterations))
	case *RemoveUserScramCredentialRecord:
		w.Key("name")
		w.String(r.Name)
		w.Key("mechanism")
		w.Int(int64(r.Mechanism))
	case *UnregisterControllerRecord:
		w.Key("controllerId")
		w.Int(int64(r.ControllerID))
	default:
		return fmt.Errorf("%w: %s has no JSON form", ErrUnknown, k)
	}
	w.End()
	return nil
}

// PayloadJSON is r as kafka-dump-log --cluster-metadata-decoder prints a
// record's payload: {"type":"TOPIC_RECORD","version":0,"data":{…}}.
func PayloadJSON(r Record) ([]byte, error) {
	var w JSONWriter
	w.Begin()
	w.Key("type")
	w.String(r.APIKey().TypeName())
	w.Key("version")
	w.Int(int64(r.RecordVersion()))
	w.Key("data")
	if err := AppendJSON(&w, r); err != nil {
		return nil, err
	}
	w.End()
	return w.Bytes(), nil
}

func (r *RegisterBrokerRecord) json(w *JSONWriter) {
	v := r.Version
	w.Key("brokerId")
	w.Int(int64(r.BrokerID))
	if v >= 2 {
		w.Key("isMigratingZkBroker")
		w.Bool(r.IsMigratingZkBroker)
	}
	w.Key("incarnationId")
	w.String(r.IncarnationID.String())
	w.Key("brokerEpoch")
	w.Int(r.BrokerEpoch)
	endpointsJSON(w, r.EndPoints)
	featuresJSON(w, r.Features)
	w.Key("rack")
	if r.Rack == nil {
		w.Null()
	} else {
		w.String(*r.Rack)
	}
	w.Key("fenced")
	w.Bool(r.Fenced)
	if v >= 1 {
		w.Key("inControlledShutdown")
		w.Bool(r.InControlledShutdown)
	}
	if v >= 3 && len(r.LogDirs) > 0 {
		w.Key("logDirs")
		w.Uuids(r.LogDirs)
	}
	if v >= 4 && r.CordonedLogDirs != nil {
		w.Key("cordonedLogDirs")
		w.Uuids(r.CordonedLogDirs)
	}
}

func (r *PartitionRecord) json(w *JSONWriter) {
	v := r.Version
	w.Key("partitionId")
	w.Int(int64(r.PartitionID))
	w.Key("topicId")
	w.String(r.TopicID.String())
	w.Key("replicas")
	w.Int32s(r.Replicas)
	w.Key("isr")
	w.Int32s(r.Isr)
	w.Key("removingReplicas")
	w.Int32s(r.RemovingReplicas)
	w.Key("addingReplicas")
	w.Int32s(r.AddingReplicas)
	w.Key("leader")
	w.Int(int64(r.Leader))
	if r.LeaderRecoveryState != LeaderRecovered {
		w.Key("leaderRecoveryState")
		w.Int(int64(r.LeaderRecoveryState))
	}
	w.Key("leaderEpoch")
	w.Int(int64(r.LeaderEpoch))
	w.Key("partitionEpoch")
	w.Int(int64(r.PartitionEpoch))
	if v >= 1 {
		w.Key("directories")
		w.Uuids(r.Directories)
	}
	if v >= 2 && r.EligibleLeaderReplicas != nil {
		w.Key("eligibleLeaderReplicas")
		w.Int32s(r.EligibleLeaderReplicas)
	}
	if v >= 2 && r.LastKnownElr != nil {
		w.Key("lastKnownElr")
		w.Int32s(r.LastKnownElr)
	}
}

func (r *PartitionChangeRecord) json(w *JSONWriter) {
	v := r.Version
	w.Key("partitionId")
	w.Int(int64(r.PartitionID))
	w.Key("topicId")
	w.String(r.TopicID.String())
	optional := func(name string, l []int32) {
		if l != nil {
			w.Key(name)
			w.Int32s(l)
		}
	}
	optional("isr", r.Isr)
	if r.Leader != NoLeaderChange {
		w.Key("leader")
		w.Int(int64(r.Leader))
	}
	optional("replicas", r.Replicas)
	optional("removingReplicas", r.RemovingReplicas)
	optional("addingReplicas", r.AddingReplicas)
	if r.LeaderRecoveryState != LeaderRecoveryNoChange {
		w.Key("leaderRecoveryState")
		w.Int(int64(r.LeaderRecoveryState))
	}
	if v >= 1 && r.Directories != nil {
		w.Key("directories")
		w.Uuids(r.Directories)
	}
	if v >= 2 {
		optional("eligibleLeaderReplicas", r.EligibleLeaderReplicas)
		optional("lastKnownElr", r.LastKnownElr)
	}
}

func (r *BrokerRegistrationChangeRecord) json(w *JSONWriter) {
	v := r.Version
	w.Key("brokerId")
	w.Int(int64(r.BrokerID))
	w.Key("brokerEpoch")
	w.Int(r.BrokerEpoch)
	if r.Fenced != FencingNoChange {
		w.Key("fenced")
		w.Int(int64(r.Fenced))
	}
	if v >= 1 && r.InControlledShutdown != ControlledShutdownNoChange {
		w.Key("inControlledShutdown")
		w.Int(int64(r.InControlledShutdown))
	}
	if v >= 2 && len(r.LogDirs) > 0 {
		w.Key("logDirs")
		w.Uuids(r.LogDirs)
	}
	if v >= 3 && r.CordonedLogDirs != nil {
		w.Key("cordonedLogDirs")
		w.Uuids(r.CordonedLogDirs)
	}
}

// optionalTextJSON prints a tagged nullable string whose default is null:
// left out when null, as the converter leaves out a tagged field at its
// default.
func optionalTextJSON(w *JSONWriter, key string, s *string) {
	if s != nil {
		w.Key(key)
		w.String(*s)
	}
}

// endpointsJSON and featuresJSON write the endpoint and feature arrays of
// the broker and controller registrations.
func endpointsJSON(w *JSONWriter, eps []BrokerEndpoint) {
	w.Key("endPoints")
	w.BeginArray()
	for _, e := range eps {
		w.Begin()
		w.Key("name")
		w.String(e.Name)
		w.Key("host")
		w.String(e.Host)
		w.Key("port")
		w.Int(int64(e.Port))
		w.Key("securityProtocol")
		w.Int(int64(e.SecurityProtocol))
		w.End()
	}
	w.EndArray()
}

func featuresJSON(w *JSONWriter, fs []BrokerFeature) {
	w.Key("features")
	w.BeginArray()
	for _, f := range fs {
		w.Begin()
		w.Key("name")
		w.String(f.Name)
		w.Key("minSupportedVersion")
		w.Int(int64(f.MinSupportedVersion))
		w.Key("maxSupportedVersion")
		w.Int(int64(f.MaxSupportedVersion))
		w.End()
	}
	w.EndArray()
}
