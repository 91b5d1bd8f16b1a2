package record

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// JSONWriter builds compact JSON the way Kafka's tools print it: Jackson's
// ObjectNode.toString, which keeps fields in the order they were set,
// writes non-ASCII text as is and escapes only quotes, backslashes and
// control characters (\b \t \n \f \r, the others as \u00XX in upper-case
// hex). encoding/json differs on each point (it sorts map keys and escapes
// <, >, & and U+2028), so kraftlab's output could not be compared with
// Kafka's line by line. The zero value is ready to use.
type JSONWriter struct {
	b []byte
	// first is true right after an opening brace or bracket, where the next
	// value needs no comma.
	first bool
}

// Bytes is the JSON written so far.
func (w *JSONWriter) Bytes() []byte { return w.b }

func (w *JSONWriter) sep() {
	if !w.first && len(w.b) > 0 {
		last := w.b[len(w.b)-1]
		if last != ':' {
			w.b = append(w.b, ',')
		}
	}
	w.first = false
}

// Begin opens an object.
func (w *JSONWriter) Begin() { w.sep(); w.b = append(w.b, '{'); w.first = true }

// End closes an object.
func (w *JSONWriter) End() { w.b = append(w.b, '}'); w.first = false }

// BeginArray opens an array.
func (w *JSONWriter) BeginArray() { w.sep(); w.b = append(w.b, '['); w.first = true }

// EndArray closes an array.
func (w *JSONWriter) EndArray() { w.b = append(w.b, ']'); w.first = false }

// Key writes an object member's name; its value follows.
func (w *JSONWriter) Key(k string) {
	w.sep()
	w.b = appendJSONString(w.b, k)
	w.b = append(w.b, ':')
}

// String writes a string value.
func (w *JSONWriter) String(s string) { w.sep(); w.b = appendJSONString(w.b, s) }

// Int writes an integer value.
func (w *JSONWriter) Int(v int64) { w.sep(); w.b = strconv.AppendInt(w.b, v, 10) }

// Bool writes true or false.
func (w *JSONWriter) Bool(v bool) { w.sep(); w.b = strconv.AppendBool(w.b, v) }

// Null writes null.
func (w *JSONWriter) Null() { w.sep(); w.b = append(w.b, "null"...) }

// Raw writes a value that is JSON already.
func (w *JSONWriter) Raw(j []byte) { w.sep(); w.b = append(w.b, j...) }

// Int32s writes an array of integers.
func (w *JSONWriter) Int32s(v []int32) {
	w.BeginArray()
	for _, x := range v {
		w.Int(int64(x))
	}
	w.EndArray()
}

// Uuids writes an array of uuids in Kafka's base64 form.
func (w *JSONWriter) Uuids(v []Uuid) {
	w.BeginArray()
	for _, x := range v {
		w.String(x.String())
	}
	w.EndArray()
}

// base64 writes a byte array as Jackson does: a string in standard base64
// with padding.
func (w *JSONWriter) base64(b []byte) { w.String(base64.StdEncoding.EncodeToString(b)) }

const hexDigits = "0123456789ABCDEF"

// appendJSONString quotes s as Jackson does. Bytes that are not UTF-8 become
// U+FFFD, as Java's decoding of a record's string does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}
