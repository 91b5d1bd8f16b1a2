package partition

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// withPayload replaces a batch's records with payload, compressed as
// codec says, fixing its length, attributes and CRC.
func withPayload(batch []byte, codec Codec, payload []byte) []byte {
	out := append(append([]byte(nil), batch[:61]...), payload...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	attrs := binary.BigEndian.Uint16(out[21:])
	binary.BigEndian.PutUint16(out[21:], attrs&^attrCompression|uint16(codec))
	return recrc(out)
}

// compressedBatch is producerBatch compressed with codec, as kgo does.
func compressedBatch(t testing.TB, codec Codec, n int, tag string) []byte {
	t.Helper()
	plain := producerBatch(n, tag, 0)
	kc := map[Codec]kgo.CompressionCodec{CodecGzip: kgo.GzipCompression(), CodecSnappy: kgo.SnappyCompression(),
		CodecLZ4: kgo.Lz4Compression(), CodecZstd: kgo.ZstdCompression()}[codec]
	c, err := kgo.DefaultCompressor(kc)
	if err != nil {
		t.Fatal(err)
	}
	out, got := c.Compress(new(bytes.Buffer), plain[61:])
	if Codec(got) != codec {
		t.Fatalf("compressed with %v, want %v", got, codec)
	}
	return withPayload(plain, codec, out)
}

// xerialBatch frames plain's records as the Java producer's snappy does.
func xerialBatch(plain []byte) []byte {
	payload := append([]byte(nil), xerialMagic...)
	payload = append(payload, 0, 0, 0, 1, 0, 0, 0, 1)
	for rest := plain[61:]; len(rest) > 0; {
		n := min(len(rest), 7)
		block := s2.EncodeSnappy(nil, rest[:n])
		payload = binary.BigEndian.AppendUint32(payload, uint32(len(block)))
		payload = append(payload, block...)
		rest = rest[n:]
	}
	return withPayload(plain, CodecSnappy, payload)
}

func zstdOf(t testing.TB, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// A producer's compressed batches of every codec are accepted, and the
// records read back as the producer wrote them.
func TestCompressedBatchesAreAccepted(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1})
	batches := map[string][]byte{"xerial snappy": xerialBatch(producerBatch(5, "x", 0))}
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		batches[c.String()] = compressedBatch(t, c, 5, c.String())
	}
	for name, b := range batches {
		before := p.LogEndOffset()
		info, err := p.AppendAsLeader(b, 1, t0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if info.FirstOffset != before || info.LastOffset != before+4 {
			t.Fatalf("%s took offsets %d-%d, want %d-%d", name, info.FirstOffset, info.LastOffset, before, before+4)
		}
	}
}

// The hostile review's batches: a zstd-flagged batch of garbage, a batch
// of one record claiming 2^31-1, a compressed batch claiming more records
// than it holds, and records whose fields run past them. None reaches the
// log.
func TestBatchesThatLieAreRefused(t *testing.T) {
	one := producerBatch(1, "a", 0)
	claim := func(b []byte, n int32) []byte {
		b = append([]byte(nil), b...)
		binary.BigEndian.PutUint32(b[recordsCountOffset:], uint32(n))
		binary.BigEndian.PutUint32(b[lastOffsetDeltaOffset:], uint32(n-1))
		return recrc(b)
	}
	three := producerBatch(3, "c", 0)
	cases := []struct {
		name  string
		batch []byte
		want  *kerr.Error
	}{
		{"zstd garbage", withPayload(one, CodecZstd, []byte("this is not zstd at all")), kerr.CorruptMessage},
		{"gzip garbage", withPayload(one, CodecGzip, []byte{0x1f, 0x8b, 8, 0, 0, 0}), kerr.CorruptMessage},
		{"lz4 garbage", withPayload(one, CodecLZ4, []byte("nope")), kerr.CorruptMessage},
		{"snappy garbage", withPayload(one, CodecSnappy, []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 1}), kerr.CorruptMessage},
		{"one record claiming 2^31-1", claim(one, math.MaxInt32), kerr.InvalidRecord},
		{"one record claiming 2", claim(one, 2), kerr.InvalidRecord},
		{"three records claiming 2", claim(three, 2), kerr.InvalidRecord},
		{"zstd of one record claiming 2^31-1", claim(compressedBatch(t, CodecZstd, 1, "z"), math.MaxInt32), kerr.InvalidRecord},
		{"zstd of one record claiming 1000", claim(compressedBatch(t, CodecZstd, 1, "z"), 1000), kerr.InvalidRecord},
		{"zstd of three records claiming 2", claim(compressedBatch(t, CodecZstd, 3, "z"), 2), kerr.InvalidRecord},
		{"record length past the batch", withPayload(one, CodecNone, append([]byte{40}, one[62:]...)), kerr.InvalidRecord},
		{"value length past the record", withPayload(one, CodecNone, []byte{14, 0, 0, 0, 1, 100, 0}), kerr.InvalidRecord},
		{"negative header key", withPayload(one, CodecNone, []byte{14, 0, 0, 0, 1, 1, 2, 1, 0}), kerr.InvalidRecord},
		{"zstd of bad framing", withPayload(one, CodecZstd, zstdOf(t, []byte{14, 0, 0, 0, 1, 100, 0})), kerr.InvalidRecord},
		{"zstd with trailing bytes", withPayload(one, CodecZstd, zstdOf(t, append(append([]byte(nil), one[61:]...), 0, 0))), kerr.InvalidRecord},
	}
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1})
	for _, c := range cases {
		_, err := p.AppendAsLeader(c.batch, 1, t0)
		if ErrorCode(err) != c.want.Code {
			t.Errorf("%s: %v, want %s", c.name, err, c.want.Message)
		}
	}
	if p.LogEndOffset() != 0 {
		t.Fatalf("refused batches moved the log end to %d", p.LogEndOffset())
	}
}

// zeroRecords is n records of size zero bytes each, offsets from 0.
func zeroRecords(n, size int) []byte {
	var rec []byte
	for i := range n {
		body := []byte{0, 0}
		body = binary.AppendVarint(body, int64(i))
		body = binary.AppendVarint(body, -1)
		body = binary.AppendVarint(body, int64(size))
		body = append(body, make([]byte, size)...)
		body = binary.AppendVarint(body, 0)
		rec = binary.AppendVarint(rec, int64(len(body)))
		rec = append(rec, body...)
	}
	return rec
}

// A decompression bomb is refused once it has inflated past its bound,
// MESSAGE_TOO_LARGE, and reading it allocates nothing near its size: the
// records are checked as a stream.
func TestDecompressionBombIsBounded(t *testing.T) {
	const n, size, limit = 64, 1 << 20, 8 << 20
	payload := zstdOf(t, zeroRecords(n, size))
	t.Logf("%d records of %d bytes compress to %d bytes", n, size, len(payload))
	check := func() error { return checkRecords(payload, CodecZstd, n, limit) }
	if err := check(); ErrorCode(err) != kerr.MessageTooLarge.Code {
		t.Fatalf("bomb: %v, want MESSAGE_TOO_LARGE", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 3 {
		if err := check(); ErrorCode(err) != kerr.MessageTooLarge.Code {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Under the race detector sync.Pool drops the pooled decoders at
	// random, so each check may build its own: the bound is on pooling.
	if alloc := (after.TotalAlloc - before.TotalAlloc) / 3; alloc > 1<<20 && !raceEnabled {
		t.Fatalf("checking the bomb allocated %d bytes a time", alloc)
	}
	// Within the bound, the same records pass.
	if err := checkRecords(payload, CodecZstd, n, n*(size+16)); err != nil {
		t.Fatalf("the records within the bound: %v", err)
	}
}

// Checking an uncompressed batch reads it in place: no allocation.
func TestUncompressedCheckAllocatesNothing(t *testing.T) {
	b := producerBatch(10, "bench", 0)
	lim := batchLimits{maxMessageBytes: DefaultMaxMessageBytes}
	if n := testing.AllocsPerRun(100, func() {
		if err := validateProducerBatch(b, lim); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per check", n)
	}
}

// A batch larger than a segment is RECORD_LIST_TOO_LARGE, as Kafka's
// RecordBatchTooLargeException; larger than message.max.bytes,
// MESSAGE_TOO_LARGE.
func TestBatchSizeLimits(t *testing.T) {
	b := producerBatch(10, "big", 0)
	if err := validateProducerBatch(b, batchLimits{maxMessageBytes: len(b) - 1}); ErrorCode(err) != kerr.MessageTooLarge.Code {
		t.Fatalf("over message.max.bytes: %v", err)
	}
	if err := validateProducerBatch(b, batchLimits{maxMessageBytes: len(b), segmentBytes: len(b) - 1}); ErrorCode(err) != kerr.RecordListTooLarge.Code {
		t.Fatalf("over segment.bytes: %v", err)
	}
	if err := validateProducerBatch(b, batchLimits{maxMessageBytes: len(b), segmentBytes: len(b)}); err != nil {
		t.Fatalf("at both limits: %v", err)
	}
}

// Whatever a compressed payload holds, checking it neither panics nor
// accepts records that would not read back.
func FuzzCheckRecords(f *testing.F) {
	plain := producerBatch(3, "f", 0)
	f.Add(uint8(0), int32(3), plain[61:])
	f.Add(uint8(CodecZstd), int32(3), zstdOf(f, plain[61:]))
	f.Add(uint8(CodecSnappy), int32(3), xerialBatch(plain)[61:])
	f.Add(uint8(CodecZstd), int32(64), zstdOf(f, zeroRecords(64, 1<<10)))
	f.Fuzz(func(t *testing.T, codec uint8, count int32, payload []byte) {
		c := Codec(codec % 5)
		err := checkRecords(payload, c, count, 1<<16)
		if err == nil && c == CodecNone {
			w := recordWalk{src: recordSource{b: payload}, limit: math.MaxInt64}
			if w.walk(count) != nil || w.atEnd() != nil {
				t.Fatal("accepted records that do not walk again")
			}
		}
		if err != nil && ErrorCode(err) == kerr.UnknownServerError.Code {
			t.Fatalf("no Kafka error for %v", err)
		}
	})
}

// A read with Fitting returns no batch larger than MaxBytes; without it
// the first batch comes whole (Kafka's minOneMessage).
func TestReadFittingLeavesOutABatchThatDoesNotFit(t *testing.T) {
	p := open(t, t.TempDir(), 1, 1)
	leader(t, p, []int32{1})
	info := mustAppend(t, p, 20)
	params := FetchParams{ReplicaID: -1, FetchOffset: info.FirstOffset, CurrentLeaderEpoch: NoEpoch, LastFetchedEpoch: NoEpoch, MaxBytes: 10}
	res, err := p.Read(params)
	if err != nil || len(res.Records) <= 10 {
		t.Fatalf("minOneMessage read: %d bytes, %v", len(res.Records), err)
	}
	params.Fitting = true
	if res, err = p.Read(params); err != nil || len(res.Records) != 0 {
		t.Fatalf("fitting read: %d bytes, %v", len(res.Records), err)
	}
	params.MaxBytes = 1 << 20
	if res, err = p.Read(params); err != nil || len(res.Records) == 0 {
		t.Fatalf("fitting read with room: %d bytes, %v", len(res.Records), err)
	}
}
