package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The append benchmarks and their baselines write batches of 1 KiB records;
// compare BenchmarkAppend/records=N/flush=P with BenchmarkFileWrite/records=N/sync=S
// of the same run: the baseline writes the same encoded bytes with plain
// sequential os.File.Write calls (and File.Sync after each under sync=true).

var benchSizes = []int{1, 100}

func BenchmarkAppend(b *testing.B) {
	for _, n := range benchSizes {
		for _, policy := range []FlushPolicy{FlushNever, FlushAlways} {
			b.Run(fmt.Sprintf("records=%d/flush=%s", n, policy), func(b *testing.B) {
				l := openLog(b, b.TempDir(), Options{FlushPolicy: policy})
				defer l.Close()
				recs := records("bench", n, 1024)
				b.SetBytes(int64(len(AppendBatch(nil, BatchSpec{}, recs))))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := l.AppendAsLeader(recs, 1, 1700000000000); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
			})
		}
	}
}

func BenchmarkFileWrite(b *testing.B) {
	for _, n := range benchSizes {
		for _, sync := range []bool{false, true} {
			b.Run(fmt.Sprintf("records=%d/sync=%v", n, sync), func(b *testing.B) {
				f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				raw := AppendBatch(nil, BatchSpec{}, records("bench", n, 1024))
				b.SetBytes(int64(len(raw)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.Write(raw); err != nil {
						b.Fatal(err)
					}
					if sync {
						if err := f.Sync(); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
			})
		}
	}
}

// buildBenchLog writes about size bytes of batches of n 1 KiB records.
func buildBenchLog(b *testing.B, dir string, n int, size int64) {
	b.Helper()
	l := openLog(b, dir, Options{FlushPolicy: FlushNever})
	recs := records("bench", n, 1024)
	batch := int64(len(AppendBatch(nil, BatchSpec{}, recs)))
	for written := int64(0); written < size; written += batch {
		if _, _, err := l.AppendAsLeader(recs, 1, 1700000000000); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRead reads a 64 MiB log front to back in Fetch-sized reads of
// 1 MiB, starting over at the end.
func BenchmarkRead(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			buildBenchLog(b, dir, n, 64<<20)
			l := openLog(b, dir, Options{FlushPolicy: FlushNever})
			defer l.Close()
			var total int64
			off := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				if off == l.LogEndOffset() {
					off = 0
				}
				raw, err := l.Read(off, 1<<20)
				if err != nil {
					b.Fatal(err)
				}
				_, last, _, _, _ := PeekBatch(raw[len(raw)-lastBatchSize(raw):])
				off = last + 1
				total += int64(len(raw))
			}
			b.ReportMetric(float64(total)/1e6/b.Elapsed().Seconds(), "MB/s")
		})
	}
}

// lastBatchSize returns the size of the last batch of whole batches in raw.
func lastBatchSize(raw []byte) int {
	size := 0
	for pos := 0; pos < len(raw); pos += size {
		_, _, _, size, _ = PeekBatch(raw[pos:])
	}
	return size
}

// BenchmarkOpen measures recovery: opening a 256 MiB log (found in the page
// cache, as after a process restart), which checks every batch.
func BenchmarkOpen(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 256 MiB log")
	}
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("256MiB/records=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			buildBenchLog(b, dir, n, 256<<20)
			b.SetBytes(256 << 20)
			for b.Loop() {
				l, err := Open(dir, Options{FlushPolicy: FlushNever})
				if err != nil {
					b.Fatal(err)
				}
				if r := l.Recovery(); r.String() != "clean" {
					b.Fatalf("recovery: %v", r)
				}
				l.Close()
			}
		})
	}
}
