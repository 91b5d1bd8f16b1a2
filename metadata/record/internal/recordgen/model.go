package main

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// scalar is what the generator knows of a non-array type.
type scalar struct {
	goType string
	// size is the fixed encoded size, 0 for a compact (length-prefixed)
	// type, whose smallest encoding is 1 byte.
	size int
}

// scalars are the non-array types, each read and written by the reader
// and writer methods of its name (strings and bytes with the field's name
// for errors, nullable strings by nullableString).
var scalars = map[string]scalar{
	"bool":   {"bool", 1},
	"int8":   {"int8", 1},
	"int16":  {"int16", 2},
	"uint16": {"uint16", 2},
	"int32":  {"int32", 4},
	"int64":  {"int64", 8},
	"uuid":   {"Uuid", 16},
	"string": {"string", 0},
	"bytes":  {"[]byte", 0},
}

// schema is the checked table the templates work from.
type schema struct {
	records []*record
	structs []*structType // those that are not aliases
	aliases []Struct
}

type record struct {
	Record
	fields []*field
	// tagged are the tagged fields in tag order, the order of the wire.
	tagged []*field
	// versioned: some field is not in every version.
	versioned bool
}

// keyName is the record's APIKey constant, e.g. KeyTopic.
func (r *record) keyName() string { return "Key" + strings.TrimSuffix(r.Name, "Record") }

type structType struct {
	Struct
	fields []*field
	// path is the array field holding the struct, which names its fields
	// in decoding errors (EndPoints.Name).
	path string
}

// minSizeConst names the generated constant holding minSize.
func (s *structType) minSizeConst() string { return "min" + s.Name + "Size" }

// minSize is the least an element takes: its fields' least sizes and an
// empty tagged-field section.
func (s *structType) minSize() int {
	n := 1
	for _, f := range s.fields {
		n += f.minSize()
	}
	return n
}

type field struct {
	Field
	goName  string
	jsonKey string
	// errName names the field in decoding errors.
	errName string
	// elem is the element type of an array ("" for a scalar field); strct
	// is set for a struct array, through any alias.
	elem  string
	strct *structType
}

func (f *field) isArray() bool  { return f.elem != "" }
func (f *field) isTagged() bool { return f.Tag != nil }

// minSize is the field's smallest encoding.
func (f *field) minSize() int {
	if f.isArray() {
		return 1
	}
	if s := scalars[f.Type].size; s > 0 {
		return s
	}
	return 1
}

// idWord matches "Id" ending a word of a Kafka field name.
var idWord = regexp.MustCompile(`Id([A-Z]|$)`)

// goFieldName is Kafka's name in Go's spelling of initialisms.
func goFieldName(f Field) string {
	if f.GoName != "" {
		return f.GoName
	}
	return idWord.ReplaceAllString(f.Name, "ID$1")
}

func jsonKey(name string) string { return strings.ToLower(name[:1]) + name[1:] }

// resolve checks the table and refuses what the generator cannot write
// correctly, naming the record and field.
func resolve(recs []Record, structDefs []Struct) (*schema, error) {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	s := &schema{}
	byName := map[string]*structType{}
	for _, d := range structDefs {
		if d.About == "" {
			fail("struct %s: no about text", d.Name)
		}
		if d.Alias != "" {
			s.aliases = append(s.aliases, d)
			continue
		}
		st := &structType{Struct: d}
		byName[d.Name] = st
		s.structs = append(s.structs, st)
	}
	for _, d := range s.aliases {
		target, ok := byName[d.Alias]
		if !ok {
			fail("struct %s: alias of unknown struct %s", d.Name, d.Alias)
			continue
		}
		if len(d.Fields) > 0 {
			fail("struct %s: an alias has no fields of its own", d.Name)
		}
		byName[d.Name] = target
	}
	for _, st := range s.structs {
		st.fields = resolveFields("struct "+st.Name, st.Fields, byName, fail)
		for _, f := range st.fields {
			if f.Since != 0 || f.isTagged() {
				fail("struct %s field %s: a struct's fields must be untagged and in every version", st.Name, f.Name)
			}
			if f.strct != nil {
				fail("struct %s field %s: structs within structs are not supported", st.Name, f.Name)
			}
		}
	}
	keys := map[int]string{}
	names := map[string]bool{}
	for _, d := range recs {
		r := &record{Record: d}
		where := "record " + d.Name
		switch {
		case !strings.HasSuffix(d.Name, "Record"):
			fail("%s: the name must end in Record", where)
		case names[d.Name]:
			fail("%s: defined twice", where)
		case keys[d.APIKey] != "":
			fail("%s: apiKey %d is %s's", where, d.APIKey, keys[d.APIKey])
		case d.MaxVersion < 0:
			fail("%s: MaxVersion %d", where, d.MaxVersion)
		case d.About == "":
			fail("%s: no about text", where)
		}
		names[d.Name] = true
		keys[d.APIKey] = d.Name
		r.fields = resolveFields(where, d.Fields, byName, fail)
		tags := map[int]string{}
		for _, f := range r.fields {
			if f.Since > d.MaxVersion {
				fail("%s field %s: since version %d, past the record's %d", where, f.Name, f.Since, d.MaxVersion)
			}
			if f.Since > 0 {
				r.versioned = true
			}
			if f.strct != nil {
				if f.strct.path == "" {
					f.strct.path = f.Name
				} else if f.strct.path != f.Name {
					fail("%s field %s: struct %s is already the element of fields named %s, which name its fields in errors", where, f.Name, f.strct.Name, f.strct.path)
				}
			}
			if !f.isTagged() {
				continue
			}
			if *f.Tag < 0 {
				fail("%s field %s: negative tag", where, f.Name)
			} else if other := tags[*f.Tag]; other != "" {
				fail("%s field %s: tag %d is %s's", where, f.Name, *f.Tag, other)
			}
			tags[*f.Tag] = f.Name
			if !taggedSupported(f) {
				fail("%s field %s: a tagged %s%s needs a size helper in writer.go and a case in sizeExpr", where, f.Name, nullableWord(f), f.Type)
			}
			r.tagged = append(r.tagged, f)
		}
		sort.Slice(r.tagged, func(i, j int) bool { return *r.tagged[i].Tag < *r.tagged[j].Tag })
		s.records = append(s.records, r)
	}
	for _, st := range s.structs {
		if st.path == "" {
			fail("struct %s: no record uses it", st.Name)
		}
		for _, f := range st.fields {
			f.errName = st.path + "." + f.Name
		}
	}
	sort.Slice(s.records, func(i, j int) bool { return s.records[i].APIKey < s.records[j].APIKey })
	return s, errors.Join(errs...)
}

func nullableWord(f *field) string {
	if f.Nullable {
		return "nullable "
	}
	return ""
}

// resolveFields checks a list of fields and resolves their types.
func resolveFields(where string, defs []Field, structs map[string]*structType, fail func(string, ...any)) []*field {
	var out []*field
	seen := map[string]bool{}
	for _, d := range defs {
		f := &field{Field: d, goName: goFieldName(d), jsonKey: jsonKey(d.Name), errName: d.Name}
		w := where + " field " + d.Name
		if d.About == "" {
			fail("%s: no about text", w)
		}
		if seen[f.goName] || f.goName == "Version" {
			fail("%s: Go name %s is taken", w, f.goName)
		}
		seen[f.goName] = true
		if elem, ok := strings.CutPrefix(d.Type, "[]"); ok {
			f.elem = elem
			switch elem {
			case "int32", "uuid":
			default:
				f.strct = structs[elem]
				if f.strct == nil {
					fail("%s: arrays of %s are not supported (only []int32, []uuid and structs of the table)", w, elem)
				}
			}
		} else if _, ok := scalars[d.Type]; !ok {
			fail("%s: unknown type %q", w, d.Type)
		}
		switch {
		case d.Nullable && d.Type == "bytes":
			fail("%s: nullable bytes need reader and writer support", w)
		case d.Nullable && !f.isArray() && d.Type != "string":
			fail("%s: a %s cannot be nullable", w, d.Type)
		case d.Default != "" && (f.isArray() || d.Type == "string" || d.Type == "bytes" || d.Type == "uuid"):
			fail("%s: only numbers and bools take a Default (a nullable field's is null, others' empty)", w)
		}
		out = append(out, f)
	}
	return out
}

// taggedSupported reports whether the writer can size the field for its
// tag header.
func taggedSupported(f *field) bool {
	switch {
	case f.strct != nil:
		return false
	case f.isArray():
		return true
	case f.Type == "string":
		return f.Nullable
	case f.Type == "bytes":
		return false
	}
	return true
}
