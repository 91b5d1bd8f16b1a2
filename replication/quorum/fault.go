package quorum

import "github.com/kraftlab/kraftlab/storage"

// describe words an error for a Status (storage.Describe) with the kind of
// disk trouble it reports.
func describe(err error) (storage.Fault, string) {
	return storage.FaultOf(err), storage.Describe(err)
}
