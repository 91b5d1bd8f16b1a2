package datasim

import (
	"os"

	"github.com/kraftlab/kraftlab/storage"
)

// noSyncDisk writes the logs' files but skips their fsyncs: a crash here
// is storage.Log.Crash, which cuts each log to what it flushed whatever
// the kernel kept, so an fsync would only cost time.
type noSyncDisk struct{}

var _ storage.Disk = noSyncDisk{}

func (noSyncDisk) WriteAt(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }
func (noSyncDisk) Sync(*os.File) error                                  { return nil }
