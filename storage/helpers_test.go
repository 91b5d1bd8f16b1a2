package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// records returns n records whose values name the batch and position, so
// a test can tell any two apart.
func records(tag string, n, size int) []Record {
	out := make([]Record, n)
	for i := range out {
		v := fmt.Appendf(nil, "%s/%d/", tag, i)
		for len(v) < size {
			v = append(v, byte('a'+len(v)%26))
		}
		out[i] = Record{Key: []byte(tag), Value: v}
	}
	return out
}

func openLog(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, epoch int32, recs []Record) (int64, int64) {
	t.Helper()
	base, last, err := l.AppendAsLeader(recs, epoch, 1700000000000)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return base, last
}

// readAll reads the log from offset on, in calls of maxBytes, and returns the
// batches it got, checking that each read continues the previous one.
func readAll(t testing.TB, l *Log, from int64, maxBytes int) []Batch {
	t.Helper()
	var out []Batch
	next := from
	for next < l.LogEndOffset() {
		raw, err := l.Read(next, maxBytes)
		if err != nil {
			t.Fatalf("read %d: %v", next, err)
		}
		if len(raw) == 0 {
			t.Fatalf("read %d: no bytes before the log end %d", next, l.LogEndOffset())
		}
		err = Batches(raw, func(_ int, b *Batch) error {
			if b.LastOffset() < next {
				return fmt.Errorf("batch %d-%d does not reach offset %d", b.FirstOffset, b.LastOffset(), next)
			}
			out = append(out, *b)
			next = b.NextOffset()
			return nil
		})
		if err != nil {
			t.Fatalf("read %d: %v", next, err)
		}
	}
	return out
}

// rawOf concatenates batches' bytes.
func rawOf(batches []Batch) []byte {
	var out []byte
	for _, b := range batches {
		out = append(out, b.Raw...)
	}
	return out
}

func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+logSuffix))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func fileBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkValues(t testing.TB, batches []Batch, want map[int64]string) {
	t.Helper()
	got := map[int64]string{}
	for i := range batches {
		recs, err := batches[i].Records()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			got[r.Offset] = string(r.Value)
		}
	}
	for off, v := range want {
		if !bytes.Equal([]byte(got[off]), []byte(v)) {
			t.Fatalf("offset %d: got %q, want %q", off, got[off], v)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
}
