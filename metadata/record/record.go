package record

import "fmt"

// APIKey identifies a metadata record type (Kafka's MetadataRecordType id).
type APIKey uint16

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
	// json writes the record as an object, as Kafka's JsonConverter
	// prints it at the record's version.
	json(w *JSONWriter)
}

// keyInfo is what Decode needs to know of a record type; the generated
// keys map holds it for every type.
type keyInfo struct {
	name       string
	maxVersion int16 // validVersions' upper end on Kafka's trunk
	new        func() Record
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
