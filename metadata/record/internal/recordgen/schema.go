package main

// The form of the schema table (records.go). It says of each record what
// Kafka's JSON schema (metadata/src/main/resources/common/metadata/*.json)
// says, in a shape of kraftlab's own: the names, types, versions, tags,
// nullability and defaults that the codec needs, and the about text that
// becomes the doc comments.

// Record is one metadata record type.
type Record struct {
	// Name is Kafka's name, e.g. "TopicRecord": the Go type's name, and
	// (without "Record", after "Key") its APIKey constant's.
	Name string
	// APIKey is the schema's apiKey (Kafka's MetadataRecordType id).
	APIKey int
	// MaxVersion is the upper end of validVersions; every record starts at
	// version 0 and is flexible in all of its versions.
	MaxVersion int16
	// About is the type's doc comment after "<Name> (apiKey N, versions
	// 0-M) ": what the record says and who writes it.
	About string
	// VersionAbout, if set, is added to the Version field's doc comment
	// (e.g. which version Kafka 4.4 writes).
	VersionAbout string
	// Fields are the record's fields in schema order, tagged fields among
	// them where the schema puts them: JSON prints them in this order, the
	// wire puts the tagged ones last, by tag.
	Fields []Field
}

// Field is one field of a record or struct.
type Field struct {
	// Name is Kafka's field name. It names the field in decoding errors
	// and, with a lower-case first letter, in JSON.
	Name string
	// GoName overrides the Go field name, which is Name with a final or
	// inner "Id" spelled "ID" (BrokerId → BrokerID).
	GoName string
	// Type is one of bool, int8, int16, uint16, int32, int64, uuid, string,
	// bytes, []int32, []uuid, or []S for a struct S of the table.
	Type string
	// Since is the first version that has the field (Kafka's "versions":
	// "N+"); fields are never removed in kraftlab's records.
	Since int16
	// Tag makes the field a tagged field with that tag, in every version
	// that has the field (Kafka's taggedVersions equal to versions).
	Tag *int
	// Nullable: the field may be null in every version that has it; a nil
	// pointer or slice is null. A nullable field's default is null.
	Nullable bool
	// Default is Kafka's default when it is not the zero value, as a Go
	// expression (a number, true, or a constant of package record). It
	// decides when a tagged field is written and which value a version
	// without the field must hold; Decode sets it before reading a field
	// that a version or the tag section may leave out.
	Default string
	// About is the field's doc comment after its Go name.
	About string
}

// Struct is the element type of a struct array (Kafka's inline "fields"
// of a "[]Name" field).
type Struct struct {
	// Name is the Go type's name, Kafka's element type name.
	Name string
	// Alias, if set, makes Name a Go alias of that struct: Kafka spells
	// both schemas alike, and one Go type serves.
	Alias string
	// About is the type's doc comment after its name.
	About string
	// Fields are in schema order. A struct's fields are in every version
	// and untagged (the generator refuses others until a record needs
	// them).
	Fields []Field
}

// tag is a Field.Tag value.
func tag(n int) *int { return &n }
