package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// Bounds of the background load (Engine.SetLoad).
const (
	// DefaultLoadRecordBytes is the size of a load record unless set.
	DefaultLoadRecordBytes = 100
	// MinLoadRecordBytes is the smallest load record: a ConfigRecord of
	// the load's resource with an empty value.
	MinLoadRecordBytes = 16
	// MaxLoadRate bounds the records per second.
	MaxLoadRate = 100_000
	// MaxLoadRecordBytes bounds a record's size: a load record is a
	// ConfigRecord, whose value is a Kafka string of at most 32767 bytes.
	MaxLoadRecordBytes = 32 << 10
	// MaxLoadBytesPerSec bounds rate × size, so that the load leaves the
	// machine (and its disk, which every voter fsyncs) responsive.
	MaxLoadBytesPerSec = 32 << 20
	// MaxTopicLoads bounds the topic loads that run at once, each a Kafka
	// client of its own.
	MaxTopicLoads = 16
)

// ValidateLoad checks the settings of a background load: recordsPerSec 0
// stops it, whatever recordBytes says.
func ValidateLoad(recordsPerSec, recordBytes int) error {
	switch {
	case recordsPerSec < 0 || recordsPerSec > MaxLoadRate:
		return fmt.Errorf("load rate %d records/s must be between 0 (stop) and %d", recordsPerSec, MaxLoadRate)
	case recordsPerSec == 0:
		return nil
	case recordBytes < MinLoadRecordBytes || recordBytes > MaxLoadRecordBytes:
		return fmt.Errorf("load record size %d B must be between %d B and %s", recordBytes, MinLoadRecordBytes, humanize.IBytes(MaxLoadRecordBytes))
	case int64(recordsPerSec)*int64(recordBytes) > MaxLoadBytesPerSec:
		return fmt.Errorf("load of %d records/s of %s is %s/s, more than the %s/s a playground takes",
			recordsPerSec, humanize.IBytes(uint64(recordBytes)), humanize.IBytes(uint64(recordsPerSec)*uint64(recordBytes)), humanize.IBytes(MaxLoadBytesPerSec))
	}
	return nil
}

// CheckTopicLoads checks a topic load of recordsPerSec records of
// recordBytes about to start on topic beside the ones running: at most
// MaxTopicLoads of them, and MaxLoadBytesPerSec in all. The one it
// replaces on the same topic does not count.
func CheckTopicLoads(running []view.TopicLoad, topic string, recordsPerSec, recordBytes int) error {
	if err := ValidateLoad(recordsPerSec, recordBytes); err != nil {
		return err
	}
	count, total := 1, int64(recordsPerSec)*int64(recordBytes)
	for _, l := range running {
		if l.Topic != topic {
			count++
			total += int64(l.RecordsPerSec) * int64(l.RecordBytes)
		}
	}
	switch {
	case count > MaxTopicLoads:
		return fmt.Errorf("%d topic loads run already, the most a playground takes: stop one first (kraftlab load stop --topic T)", MaxTopicLoads)
	case total > MaxLoadBytesPerSec:
		return fmt.Errorf("with the topic loads running, %s/s in all, more than the %s/s a playground takes", humanize.IBytes(uint64(total)), humanize.IBytes(MaxLoadBytesPerSec))
	}
	return nil
}

// The load's records are real metadata records the loaders apply: each sets
// config "seq" of the topic resource "load!" to the record's sequence number,
// padded with dots to the size asked for. "load!" is not a valid topic name,
// so the load's configs never mix with a real topic's; the image holds one
// key for the load, whatever it wrote.
const (
	loadResource = "load!"
	loadKey      = "seq"
)

// loadLayout finds the resource name and value length that make a load
// record exactly size bytes. A value length whose compact-string length
// prefix grows by a byte (127 → 128) leaves one size out; a longer
// resource name covers it.
func loadLayout(size int) (name string, valueLen int, err error) {
	if size < MinLoadRecordBytes {
		return "", 0, fmt.Errorf("load record size %d B: want at least %d B", size, MinLoadRecordBytes)
	}
	for extra := range 3 {
		name = loadResource + strings.Repeat("!", extra)
		for v := size - MinLoadRecordBytes - extra; v >= 0 && v >= size-MinLoadRecordBytes-extra-4; v-- {
			b, err := record.Encode(loadRecord(name, strings.Repeat(".", v)))
			if err != nil {
				return "", 0, fmt.Errorf("encode a load record: %w", err)
			}
			if len(b) == size {
				return name, v, nil
			}
		}
	}
	return "", 0, fmt.Errorf("no load record of exactly %d B", size)
}

func loadRecord(name, value string) *record.ConfigRecord {
	return &record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: name, Name: loadKey, Value: &value}
}

// LoadRecords returns n framed load records of exactly size bytes, for
// sequence numbers seq, seq+1, …: what the playground's background load
// and kraftlab's benchmarks append.
func LoadRecords(seq int64, n, size int) ([][]byte, error) {
	name, vlen, err := loadLayout(size)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, n*size)
	recs := make([][]byte, n)
	val := make([]byte, vlen)
	for i := range recs {
		digits := strconv.AppendInt(val[:0], seq+int64(i), 10)
		w := min(len(digits), vlen)
		for j := w; j < vlen; j++ {
			val[j] = '.'
		}
		start := len(buf)
		if buf, err = record.AppendEncode(buf, loadRecord(name, string(val[:vlen]))); err != nil {
			return nil, fmt.Errorf("encode load record %d: %w", seq+int64(i), err)
		}
		recs[i] = buf[start:len(buf):len(buf)]
	}
	return recs, nil
}
