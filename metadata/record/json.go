package record

import (
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
	r.json(w)
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

// jsonPrinter is a struct of a struct array, which prints itself as an
// object.
type jsonPrinter[T any] interface {
	*T
	json(w *JSONWriter)
}

// jsonStructs prints an array of structs.
func jsonStructs[T any, P jsonPrinter[T]](w *JSONWriter, a []T) {
	w.BeginArray()
	for i := range a {
		P(&a[i]).json(w)
	}
	w.EndArray()
}
