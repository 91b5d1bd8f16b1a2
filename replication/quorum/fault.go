package quorum

import (
	"fmt"

	"github.com/kraftlab/kraftlab/storage"
)

// describe words an error for a Status: led by the kind of disk trouble it
// reports, if any, so that a view says "disk full: ..." before the detail.
func describe(err error) (storage.Fault, string) {
	f := storage.FaultOf(err)
	if f == storage.NoFault {
		return f, err.Error()
	}
	return f, fmt.Sprintf("%v: %v", f, err)
}
