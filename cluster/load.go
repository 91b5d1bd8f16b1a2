package cluster

import (
	"fmt"

	"github.com/dustin/go-humanize"
)

// Bounds of the background load (Engine.SetLoad).
const (
	// DefaultLoadRecordBytes is the size of a load record unless set.
	DefaultLoadRecordBytes = 100
	// MaxLoadRate bounds the records per second.
	MaxLoadRate = 100_000
	// MaxLoadRecordBytes bounds a record's size: about Kafka's default
	// max.message.bytes.
	MaxLoadRecordBytes = 1 << 20
	// MaxLoadBytesPerSec bounds rate × size, so that the load leaves the
	// machine (and its disk, which every voter fsyncs) responsive.
	MaxLoadBytesPerSec = 32 << 20
)

// ValidateLoad checks the settings of a background load: recordsPerSec 0
// stops it, whatever recordBytes says.
func ValidateLoad(recordsPerSec, recordBytes int) error {
	switch {
	case recordsPerSec < 0 || recordsPerSec > MaxLoadRate:
		return fmt.Errorf("load rate %d records/s must be between 0 (stop) and %d", recordsPerSec, MaxLoadRate)
	case recordsPerSec == 0:
		return nil
	case recordBytes < 1 || recordBytes > MaxLoadRecordBytes:
		return fmt.Errorf("load record size %d B must be between 1 B and %s", recordBytes, humanize.IBytes(MaxLoadRecordBytes))
	case int64(recordsPerSec)*int64(recordBytes) > MaxLoadBytesPerSec:
		return fmt.Errorf("load of %d records/s of %s is %s/s, more than the %s/s a playground takes",
			recordsPerSec, humanize.IBytes(uint64(recordBytes)), humanize.IBytes(uint64(recordsPerSec)*uint64(recordBytes)), humanize.IBytes(MaxLoadBytesPerSec))
	}
	return nil
}
