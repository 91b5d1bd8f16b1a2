package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzDecodeBatch feeds arbitrary bytes to the batch decoder: it must never
// panic, and a batch it accepts must survive re-encoding unchanged.
func FuzzDecodeBatch(f *testing.F) {
	f.Add(AppendBatch(nil, BatchSpec{BaseOffset: 5, LeaderEpoch: 2, Timestamp: 1700000000000},
		[]Record{{Key: []byte("k"), Value: []byte("v"), Headers: []kmsg.Header{{Key: "h", Value: []byte("x")}}}, {Value: nil}}))
	f.Add(AppendBatch(nil, BatchSpec{Control: true, LeaderEpoch: 1},
		[]Record{LeaderChangeRecord(1, []int32{1, 2, 3}, []int32{1}), SnapshotHeaderRecord(7), SnapshotFooterRecord()}))
	f.Add([]byte{})
	f.Add(make([]byte, BatchHeaderSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		PeekBatch(data)
		Batches(data, func(int, *Batch) error { return nil })
		checkDecode(t, data)
		// Random bytes rarely pass a CRC: also try them with the length,
		// magic and CRC made right, so that the record decoder sees them.
		if len(data) >= BatchHeaderSize {
			fixed := append([]byte(nil), data...)
			binary.BigEndian.PutUint32(fixed[offsetLength:], uint32(len(fixed)-logOverhead))
			fixed[offsetMagic] = magicV2
			binary.BigEndian.PutUint32(fixed[offsetCRC:], crc32.Checksum(fixed[offsetAttributes:], castagnoli))
			checkDecode(t, fixed)
		}
	})
}

// checkDecode decodes a batch: it must fail with a known error or survive
// re-encoding unchanged.
func checkDecode(t *testing.T, data []byte) {
	b, err := DecodeBatch(data)
	if err != nil {
		if !errors.Is(err, ErrShortBatch) && !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("error of no known kind: %v", err)
		}
		return
	}
	if b.Size() > len(data) {
		t.Fatalf("batch of %d bytes from %d", b.Size(), len(data))
	}
	recs, err := b.Records()
	if err != nil {
		if !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("error of no known kind: %v", err)
		}
		return
	}
	for _, r := range recs {
		if b.IsControl() {
			if typ, err := ControlType(r); err == nil && typ == ControlLeaderChange {
				ParseLeaderChange(r)
			}
		}
	}
	if len(recs) == 0 {
		return
	}
	// Re-encoding the records gives a batch that decodes to the same
	// records and encodes to the same bytes again.
	spec := BatchSpec{BaseOffset: b.FirstOffset, LeaderEpoch: b.PartitionLeaderEpoch, Control: b.IsControl(), Timestamp: b.FirstTimestamp}
	once := AppendBatch(nil, spec, recs)
	b2, err := DecodeBatch(once)
	if err != nil {
		t.Fatalf("re-encoded batch does not decode: %v", err)
	}
	recs2, err := b2.Records()
	if err != nil || len(recs2) != len(recs) || b2.IsControl() != b.IsControl() || b2.PartitionLeaderEpoch != b.PartitionLeaderEpoch {
		t.Fatalf("re-encoded batch: %d records, %v", len(recs2), err)
	}
	for i := range recs {
		if string(recs[i].Key) != string(recs2[i].Key) || string(recs[i].Value) != string(recs2[i].Value) ||
			(recs[i].Key == nil) != (recs2[i].Key == nil) || (recs[i].Value == nil) != (recs2[i].Value == nil) ||
			fmt.Sprint(recs[i].Headers) != fmt.Sprint(recs2[i].Headers) || recs2[i].Offset != b.FirstOffset+int64(i) {
			t.Fatalf("record %d changed: %+v became %+v", i, recs[i], recs2[i])
		}
	}
	if twice := AppendBatch(nil, spec, recs2); string(twice) != string(once) {
		t.Fatal("encoding is not deterministic")
	}
}

// buildFuzzLog writes a log whose batches, records and epochs come from
// program, and returns its batches and epoch cache.
func buildFuzzLog(t *testing.T, dir string, opts Options, program []byte) ([]Batch, []EpochEntry) {
	l := openLog(t, dir, opts)
	epoch := int32(0)
	for n := 0; n < 40 && (n == 0 || len(program) > 0); n++ {
		op := byte(n)
		if len(program) > 0 {
			op, program = program[0], program[1:]
		}
		if op&0x80 != 0 {
			epoch++
		}
		recs := make([]Record, 1+op%4)
		for i := range recs {
			size := 0
			if len(program) > 0 {
				size, program = min(int(program[0]%64), len(program)-1), program[1:]
			}
			recs[i].Value, program = program[:size], program[size:]
		}
		if _, _, err := l.AppendAsLeader(recs, epoch, int64(op)); err != nil {
			t.Fatal(err)
		}
	}
	batches, epochs := readAll(t, l, 0, 1<<20), l.Epochs()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return batches, epochs
}

// expectRecovery is the recovery contract in brute-force form: walk the
// damaged segments batch by batch; at the first batch that is damaged or
// does not follow, the log may only be cut if no intact batch that could
// continue the log follows, in that segment or a later one. It returns the
// bytes the recovered log must hold, or ok=false if Open must fail.
func expectRecovery(segs []int64, files map[int64][]byte) (want []byte, ok bool) {
	next, epoch := segs[0], int32(-1)
	for i, base := range segs {
		data := files[base]
		laterData := slices.ContainsFunc(segs[i+1:], func(b int64) bool { return len(files[b]) > 0 })
		if base != next {
			return want, len(data) == 0 && !laterData
		}
		pos := 0
		for pos < len(data) {
			b, err := DecodeBatch(data[pos:])
			if err != nil || b.FirstOffset != next || b.PartitionLeaderEpoch < epoch {
				break
			}
			want = append(want, b.Raw...)
			next, epoch = b.NextOffset(), b.PartitionLeaderEpoch
			pos += b.Size()
		}
		if pos == len(data) {
			continue
		}
		for q := pos + 1; q < len(data); q++ {
			h, err := verifyBatch(data[q:])
			if err == nil && h.base >= next && h.last-base <= math.MaxInt32 {
				return want, false
			}
		}
		return want, !laterData
	}
	return want, true
}

// FuzzRecover builds a valid log from the input, damages one of its files
// (cut or a flipped bit at an input-chosen place) and reopens it: Open must
// not panic, and must either recover exactly the longest valid prefix, when
// the damage is a tail, or fail with ErrCorruptLog (under SetAsideDamage:
// recover that prefix and report the loss). A second open must find
// nothing left to repair.
func FuzzRecover(f *testing.F) {
	f.Add([]byte("\x81\x05hello\x02\x10abcdefghijklmnop\x83\x01x\x01y\x01z\x01w"), uint16(0), uint8(0), uint32(7), false)
	f.Add([]byte("\x03\x3fzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\x82\x04abcd"), uint16(100), uint8(1), uint32(1000), true)
	f.Add([]byte{0x80, 0x81, 0x02, 0x83, 0x04, 0x85}, uint16(3), uint8(5), uint32(90), true)
	f.Add([]byte{}, uint16(0), uint8(0), uint32(0), false)
	f.Fuzz(func(t *testing.T, program []byte, segBytes uint16, target uint8, pos uint32, flip bool) {
		dir := t.TempDir()
		opts := Options{SegmentBytes: 150 + int(segBytes%2000), IndexIntervalBytes: 80, FlushPolicy: FlushNever}
		batches, epochs := buildFuzzLog(t, dir, opts, program)
		var segs []int64
		files := map[int64][]byte{}
		for _, p := range segmentFiles(t, dir) {
			base := mustBase(t, p)
			segs = append(segs, base)
			files[base] = fileBytes(t, p)
		}
		others, _ := filepath.Glob(filepath.Join(dir, "*"+indexSuffix))
		others = append(others, filepath.Join(dir, epochCacheFile))

		// Damage one file.
		var path string
		var logDamage bool
		if i := int(target) % (len(segs) + len(others)); i < len(segs) {
			path, logDamage = filepath.Join(dir, segmentName(segs[i])+logSuffix), true
		} else {
			path = others[i-len(segs)]
		}
		data := fileBytes(t, path)
		switch {
		case flip && len(data) > 0:
			bit := int(pos % uint32(len(data)*8))
			data[bit/8] ^= 1 << (bit % 8)
		case !flip:
			data = data[:int(pos%uint32(len(data)+1))]
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, ok := rawOf(batches), true
		if logDamage {
			files[mustBase(t, path)] = data
			want, ok = expectRecovery(segs, files)
		}

		// An odd segment size opens the way a partition replica does:
		// damage before intact data is set aside instead of refused.
		opts.SetAsideDamage = segBytes%2 == 1
		l, err := Open(dir, opts)
		if !ok && !opts.SetAsideDamage {
			if !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("damage before intact data: open returned %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("recoverable damage: %v", err)
		}
		if r := l.Recovery(); !ok && (!r.LostRecords() || len(r.SetAside) == 0) {
			t.Fatalf("damage before intact data set aside without saying what was lost: %v", r)
		}
		got := rawOf(readAll(t, l, 0, 1<<20))
		if string(got) != string(want) {
			t.Fatalf("recovered %d bytes, want %d (%v)", len(got), len(want), l.Recovery())
		}
		if !logDamage && fmt.Sprint(l.Epochs()) != fmt.Sprint(epochs) {
			t.Fatalf("epochs %v, want %v", l.Epochs(), epochs)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openLog(t, dir, opts)
		defer l.Close()
		if r := l.Recovery(); r.String() != "clean" {
			t.Fatalf("second open repairs again: %v", r)
		}
		if got2 := rawOf(readAll(t, l, 0, 1<<20)); string(got2) != string(want) {
			t.Fatal("second open reads differently")
		}
		if _, _, err := l.AppendAsLeader([]Record{{Value: []byte("after")}}, l.LastEpoch()+1, 0); err != nil {
			t.Fatalf("append after recovery: %v", err)
		}
	})
}
