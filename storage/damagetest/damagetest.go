// Package damagetest damages log segment files for tests, as a disk or a
// person would: a flipped byte, a file cut short.
package damagetest

import (
	"os"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
)

// Flip flips one bit of the byte at pos of the file at path.
func Flip(t testing.TB, path string, pos int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[pos] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Cut truncates the file at path to size bytes.
func Cut(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// BatchEnd is the byte position where the n-th record batch of the
// segment file at path ends (uncompressed batches).
func BatchEnd(t testing.TB, path string, n int) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	if err := storage.Batches(b, func(pos int, batch *storage.Batch) error {
		if n > 0 {
			end, n = int64(pos+batch.Size()), n-1
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return end
}
