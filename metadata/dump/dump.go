package dump

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// Dump is what a file, or a run of batches, holds.
type Dump struct {
	// File is the file's name, empty for batches read from a log.
	File string `json:"file,omitempty"`
	// Header is the line Kafka prints before the batches, from the file's
	// name: "Log starting offset: N" or "Snapshot end offset: N, epoch: E".
	Header  string  `json:"header,omitempty"`
	Batches []Batch `json:"batches"`
	// InvalidBytes counts the bytes after the last whole batch; Invalid
	// says why they are not a batch.
	InvalidBytes int    `json:"invalidBytes,omitempty"`
	Invalid      string `json:"invalid,omitempty"`
}

// Batch is one batch's header as kafka-dump-log prints it, and its records.
type Batch struct {
	BaseOffset           int64 `json:"baseOffset"`
	LastOffset           int64 `json:"lastOffset"`
	Count                int32 `json:"count"`
	BaseSequence         int32 `json:"baseSequence"`
	LastSequence         int32 `json:"lastSequence"`
	ProducerID           int64 `json:"producerId"`
	ProducerEpoch        int16 `json:"producerEpoch"`
	PartitionLeaderEpoch int32 `json:"partitionLeaderEpoch"`
	IsTransactional      bool  `json:"isTransactional"`
	IsControl            bool  `json:"isControl"`
	// DeleteHorizonMs is set only on batches a compaction marked.
	DeleteHorizonMs *int64 `json:"deleteHorizonMs,omitempty"`
	// Position is the batch's byte position in its file (or in the bytes
	// read).
	Position int64 `json:"position"`
	// TimestampType is CreateTime or LogAppendTime; Timestamp is the
	// batch's max timestamp (its append time, in Unix ms).
	TimestampType string `json:"timestampType"`
	Timestamp     int64  `json:"timestamp"`
	Size          int    `json:"size"`
	Magic         int8   `json:"magic"`
	CompressCodec string `json:"compresscodec"`
	CRC           uint32 `json:"crc"`
	// Records are the batch's records; Error says why they could not be
	// read (then Records is empty).
	Records []Record `json:"records"`
	Error   string   `json:"error,omitempty"`
}

// Record is one record of a batch. For a metadata record Type is its
// MetadataRecordType name (e.g. "TOPIC_RECORD"), Version its version and
// Data its JSON; for a control record Control is its control type
// ("LeaderChange", "SnapshotHeader", …) and Data the message's JSON.
// Error says why the value did not decode.
type Record struct {
	Offset     int64           `json:"offset"`
	Timestamp  int64           `json:"timestamp"`
	KeySize    int             `json:"keySize"`
	ValueSize  int             `json:"valueSize"`
	Sequence   int32           `json:"sequence"`
	HeaderKeys []string        `json:"headerKeys"`
	Control    ControlType     `json:"control,omitempty"`
	Type       string          `json:"type,omitempty"`
	Version    *int16          `json:"version,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// Batch attribute bits (Kafka's DefaultRecordBatch).
const (
	attrCompression   = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrDeleteHorizon = 0x40
)

var codecs = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// Read reads the whole batches at the start of raw, positions counted from
// 0. It never fails: what is not a batch ends the dump as InvalidBytes.
func Read(raw []byte) *Dump {
	d := &Dump{Batches: []Batch{}}
	pos := 0
	for pos < len(raw) {
		b, err := storage.DecodeBatch(raw[pos:])
		if err != nil {
			d.InvalidBytes = len(raw) - pos
			d.Invalid = fmt.Sprintf("at position %d: %v", pos, err)
			break
		}
		d.Batches = append(d.Batches, FromBatch(&b, int64(pos)))
		pos += b.Size()
	}
	return d
}

// ReadFile is Read with the header line Kafka prints for a file of that
// name: a segment's base offset, a snapshot's end offset and epoch.
func ReadFile(name string, raw []byte) *Dump {
	d := Read(raw)
	d.File = name
	d.Header = fileHeader(filepath.Base(name))
	return d
}

// fileHeader is DumpLogSegments.dumpLog's first line for a file name.
func fileHeader(base string) string {
	switch {
	case strings.HasSuffix(base, ".log"):
		stem, _, _ := strings.Cut(base, ".")
		if off, err := strconv.ParseInt(stem, 10, 64); err == nil {
			return fmt.Sprintf("Log starting offset: %d", off)
		}
	case base == "bootstrap.checkpoint":
		return "KRaft bootstrap snapshot"
	case strings.HasSuffix(base, ".checkpoint"):
		off, ep, ok := strings.Cut(strings.TrimSuffix(base, ".checkpoint"), "-")
		o, err1 := strconv.ParseInt(off, 10, 64)
		e, err2 := strconv.ParseInt(ep, 10, 32)
		if ok && err1 == nil && err2 == nil {
			return fmt.Sprintf("Snapshot end offset: %d, epoch: %d", o, e)
		}
	}
	return ""
}

// FromBatches describes batches that lay one after the other from position
// 0, as storage.SnapshotReader.Batches returns a snapshot's.
func FromBatches(batches []storage.Batch) *Dump {
	d := &Dump{Batches: make([]Batch, 0, len(batches))}
	var pos int64
	for i := range batches {
		d.Batches = append(d.Batches, FromBatch(&batches[i], pos))
		pos += int64(batches[i].Size())
	}
	return d
}

// FromBatch describes one decoded batch found at position pos, decoding
// its records.
func FromBatch(b *storage.Batch, pos int64) Batch {
	attrs := b.Attributes
	out := Batch{
		BaseOffset:           b.FirstOffset,
		LastOffset:           b.LastOffset(),
		Count:                b.NumRecords,
		BaseSequence:         b.FirstSequence,
		LastSequence:         sequence(b.FirstSequence, b.LastOffsetDelta),
		ProducerID:           b.ProducerID,
		ProducerEpoch:        b.ProducerEpoch,
		PartitionLeaderEpoch: b.PartitionLeaderEpoch,
		IsTransactional:      attrs&attrTransactional != 0,
		IsControl:            b.IsControl(),
		Position:             pos,
		TimestampType:        "CreateTime",
		Timestamp:            b.MaxTimestamp,
		Size:                 b.Size(),
		Magic:                b.Magic,
		CompressCodec:        fmt.Sprintf("codec %d", attrs&attrCompression),
		CRC:                  uint32(b.CRC),
		Records:              []Record{},
	}
	if c := int(attrs & attrCompression); c < len(codecs) {
		out.CompressCodec = codecs[c]
	}
	if attrs&attrLogAppendTime != 0 {
		out.TimestampType = "LogAppendTime"
	}
	if attrs&attrDeleteHorizon != 0 {
		h := b.FirstTimestamp
		out.DeleteHorizonMs = &h
	}
	recs, err := b.Records()
	if err != nil {
		out.Error = err.Error()
		return out
	}
	for _, r := range recs {
		out.Records = append(out.Records, fromRecord(&out, b, r))
	}
	return out
}

// sequence is a record's sequence number: the batch's base sequence plus
// the record's offset delta, wrapping at 2^31 as Kafka's
// DefaultRecordBatch.incrementSequence does; -1 when the batch has none.
func sequence(base, delta int32) int32 {
	if base < 0 || delta < 0 {
		return -1
	}
	const max = 1<<31 - 1
	if int64(base) > max-int64(delta) {
		return int32(int64(delta) - (max - int64(base)) - 1)
	}
	return base + delta
}

func fromRecord(out *Batch, b *storage.Batch, r storage.Record) Record {
	rec := Record{
		Offset:     r.Offset,
		Timestamp:  r.Timestamp,
		KeySize:    size(r.Key),
		ValueSize:  size(r.Value),
		Sequence:   sequence(b.FirstSequence, int32(r.Offset-b.FirstOffset)),
		HeaderKeys: []string{},
	}
	if out.TimestampType == "LogAppendTime" {
		rec.Timestamp = b.MaxTimestamp
	}
	for _, h := range r.Headers {
		rec.HeaderKeys = append(rec.HeaderKeys, h.Key)
	}
	if out.IsControl {
		decodeControl(&rec, r)
		return rec
	}
	m, err := record.Decode(r.Value)
	if err == nil {
		var j []byte
		if j, err = record.JSON(m); err == nil {
			v := m.RecordVersion()
			rec.Type, rec.Version, rec.Data = m.APIKey().TypeName(), &v, j
			return rec
		}
	}
	rec.Error = err.Error()
	return rec
}

// size is a key's or value's size as Kafka prints it: -1 for null.
func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}
