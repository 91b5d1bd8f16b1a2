package datasim

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/kraftlab/kraftlab/storage"
)

// noSyncDisk writes the logs' files but skips their fsyncs: a crash here
// is storage.Log.Crash, which cuts each log to what it flushed whatever
// the kernel kept, so an fsync would only cost time.
type noSyncDisk struct{}

var _ storage.Disk = noSyncDisk{}

func (noSyncDisk) WriteAt(f *os.File, b []byte, off int64) (int, error) { return f.WriteAt(b, off) }
func (noSyncDisk) Sync(*os.File) error                                  { return nil }

// tearTail leaves what a crash in the middle of a write leaves past the
// flushed end of the newest segment file in dir: some zeroed or random
// bytes, as a disk that wrote part of a block does. Recovery must find
// that no whole batch and cut it off. It returns how many bytes it left.
func tearTail(r *rand.Rand, dir string) (int, string, error) {
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(segs) == 0 {
		return 0, "", err
	}
	slices.Sort(segs)
	path := segs[len(segs)-1]
	junk := make([]byte, 1+r.IntN(96))
	if r.IntN(2) == 0 {
		for i := range junk {
			junk[i] = byte(r.IntN(256))
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, "", err
	}
	_, err = f.Write(junk)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return len(junk), filepath.Base(path), err
}
