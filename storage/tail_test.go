package storage

import (
	"bytes"
	"testing"
)

// tailBatches encodes n batches of one record of size bytes each, from
// offset base.
func tailBatches(base int64, n, size int) []byte {
	var out []byte
	for i := range n {
		out = AppendBatch(out, BatchSpec{BaseOffset: base + int64(i), LeaderEpoch: 1}, []Record{{Value: bytes.Repeat([]byte{byte(i)}, size)}})
	}
	return out
}

func TestTailServesWhatWasAddedWholeBatches(t *testing.T) {
	var tl Tail
	if _, ok := tl.Base(); ok {
		t.Fatal("an empty tail holds something")
	}
	raw := tailBatches(10, 5, 100)
	tl.Add(raw)
	if base, ok := tl.Base(); !ok || base != 10 {
		t.Fatalf("base %d %v, want 10", base, ok)
	}
	if _, ok := tl.Read(9, 1<<20); ok {
		t.Error("read below the tail's base served")
	}
	if _, ok := tl.Read(15, 1<<20); ok {
		t.Error("read at the tail's end served")
	}
	got, ok := tl.Read(10, 1<<20)
	if !ok || !bytes.Equal(got, raw) {
		t.Fatalf("read of everything: %d bytes, %v", len(got), ok)
	}
	// maxBytes below one batch still answers that batch, and only it.
	one, ok := tl.Read(12, 1)
	_, _, _, size, err := PeekBatch(one)
	if !ok || err != nil || size != len(one) {
		t.Fatalf("read of one batch: %d bytes, %v, %v", len(one), ok, err)
	}
	if base, _, _, _, _ := PeekBatch(one); base != 12 {
		t.Errorf("read at 12 starts at %d", base)
	}
}

func TestTailKeepsThePreviousBufferAndStartsOverOnAGap(t *testing.T) {
	var tl Tail
	const size = 64 << 10
	n := int64(0)
	for n < 40 { // past two buffers of 1 MiB
		tl.Add(tailBatches(n, 1, size))
		n++
	}
	if _, ok := tl.Read(n-1, size); !ok {
		t.Fatal("the newest batch is not served")
	}
	if _, ok := tl.Read(n-17, size); !ok {
		t.Error("a batch of the previous buffer is not served")
	}
	if _, ok := tl.Read(0, size); ok {
		t.Error("the oldest batch is still served after two buffers filled")
	}
	// An append that does not follow the end starts the tail over.
	tl.Add(tailBatches(n+5, 1, 10))
	if base, ok := tl.Base(); !ok || base != n+5 {
		t.Fatalf("after a gap the base is %d %v, want %d", base, ok, n+5)
	}
	if _, ok := tl.Read(n-1, size); ok {
		t.Error("a batch from before the gap is still served")
	}
	tl.Reset()
	if _, ok := tl.Read(n+5, size); ok {
		t.Error("a reset tail serves")
	}
}

func TestTailHandsOutBytesItNeverWritesAgain(t *testing.T) {
	var tl Tail
	tl.Add(tailBatches(0, 1, 100))
	first, _ := tl.Read(0, 1<<20)
	keep := bytes.Clone(first)
	for i := int64(1); i < 50; i++ {
		tl.Add(tailBatches(i, 1, 50<<10))
	}
	if !bytes.Equal(first, keep) {
		t.Error("bytes handed out were written again")
	}
}

// Small appends fill buffers that start small and double, and the tail
// keeps between 1 and 2 MiB of the newest batches however long it runs.
func TestTailKeepsTheNewestMiBInFewBuffers(t *testing.T) {
	var tl Tail
	one := len(tailBatches(0, 1, 1000))
	for i := int64(0); i < 10_000; i++ { // about 10 MiB
		tl.Add(tailBatches(i, 1, 1000))
		held := 0
		for _, b := range tl.bufs {
			held += len(b.raw)
		}
		if held > 2*tailBufferBytes+one {
			t.Fatalf("after %d batches the tail holds %d bytes in %d buffers", i+1, held, len(tl.bufs))
		}
		if back := int64(tailBufferBytes/one) - 1; i >= back {
			if _, ok := tl.Read(i-back, one); !ok {
				t.Fatalf("after %d batches the one %d back is not served", i+1, back)
			}
		}
	}
	if len(tl.bufs) > 3 {
		t.Errorf("the tail keeps %d buffers", len(tl.bufs))
	}
	for _, b := range tl.bufs {
		if len(b.raw) > cap(b.raw) || cap(b.raw) > tailBufferBytes {
			t.Errorf("a buffer of %d bytes has room for %d", len(b.raw), cap(b.raw))
		}
	}
}
