package view

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// MaxDiskDelay bounds a node's disk delay.
const MaxDiskDelay = storage.MaxDiskDelay

// ValidateDiskDelay checks a disk delay's range: whole milliseconds from
// 0 to MaxDiskDelay.
func ValidateDiskDelay(d time.Duration) error {
	switch {
	case d < 0 || d > MaxDiskDelay:
		return fmt.Errorf("disk delay %v must be between 0 and %v", d, MaxDiskDelay)
	case d%time.Millisecond != 0:
		return fmt.Errorf("disk delay %v must be whole milliseconds", d)
	}
	return nil
}
