package quorum

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// The conformance tests run the same operations against raft.MemoryLog, the
// log the quorum's simulation trusts, and DiskLog, and require the same
// answers: same offsets, epochs, bytes, snapshots and the same failures.

// logPair drives a MemoryLog and a DiskLog in step.
type logPair struct {
	t    *testing.T
	dir  string
	mem  *raft.MemoryLog
	disk *DiskLog
}

func newLogPair(t *testing.T) *logPair {
	t.Helper()
	p := &logPair{t: t, dir: t.TempDir(), mem: raft.NewMemoryLog()}
	p.reopen()
	t.Cleanup(func() { p.disk.Close() })
	return p
}

func (p *logPair) reopen() {
	p.t.Helper()
	d, err := OpenDiskLog(p.dir, storage.Options{FlushPolicy: storage.FlushNever, SegmentBytes: 700, IndexIntervalBytes: 100})
	if err != nil {
		p.t.Fatalf("open disk log: %v", err)
	}
	p.disk = d
}

func (p *logPair) crash() {
	p.t.Helper()
	p.mem.Crash()
	if err := p.disk.Crash(); err != nil {
		p.t.Fatalf("crash disk log: %v", err)
	}
	p.reopen()
}

// both runs op against each log and requires the same outcome: both
// succeed, or both fail. It reports whether they failed.
func (p *logPair) both(what string, op func(l raft.Log) error) bool {
	p.t.Helper()
	em, ed := op(p.mem), op(p.disk)
	if (em == nil) != (ed == nil) {
		p.t.Fatalf("%s: memory log says %v, disk log says %v", what, em, ed)
	}
	p.check(what)
	return em != nil
}

// ok runs op against both logs and requires success.
func (p *logPair) ok(what string, op func(l raft.Log) error) {
	p.t.Helper()
	if p.both(what, op) {
		p.t.Fatalf("%s failed on both logs: %v", what, op(p.mem))
	}
}

// fails runs op against both logs and requires failure.
func (p *logPair) fails(what string, op func(l raft.Log) error) {
	p.t.Helper()
	if !p.both(what, op) {
		p.t.Fatalf("%s succeeded on both logs", what)
	}
}

// check compares everything a raft.Node can observe.
func (p *logPair) check(after string) {
	p.t.Helper()
	fail := func(format string, args ...any) {
		p.t.Helper()
		p.t.Fatalf("after %s: "+format, append([]any{after}, args...)...)
	}
	m, d := p.mem, p.disk
	if m.LogStartOffset() != d.LogStartOffset() || m.LogEndOffset() != d.LogEndOffset() {
		fail("log [%d, %d) in memory, [%d, %d) on disk", m.LogStartOffset(), m.LogEndOffset(), d.LogStartOffset(), d.LogEndOffset())
	}
	if m.LastFlushedOffset() != d.LastFlushedOffset() {
		fail("flushed offset %d in memory, %d on disk", m.LastFlushedOffset(), d.LastFlushedOffset())
	}
	if m.LastEpoch() != d.LastEpoch() {
		fail("last epoch %d in memory, %d on disk", m.LastEpoch(), d.LastEpoch())
	}
	for e := int32(-1); e <= m.LastEpoch()+2; e++ {
		me, mo := m.EndOffsetForEpoch(e)
		de, do := d.EndOffsetForEpoch(e)
		if me != de || mo != do {
			fail("EndOffsetForEpoch(%d) = (%d, %d) in memory, (%d, %d) on disk", e, me, mo, de, do)
		}
	}
	ms, mok := m.LatestSnapshot()
	ds, dok := d.LatestSnapshot()
	if ms != ds || mok != dok {
		fail("latest snapshot %v %v in memory, %v %v on disk", ms, mok, ds, dok)
	}
	for off := m.LogStartOffset() - 1; off <= m.LogEndOffset()+1; off++ {
		for _, max := range []int{1, 200, 1 << 20} {
			mb, merr := m.Read(off, max)
			db, derr := d.Read(off, max)
			if (merr == nil) != (derr == nil) {
				fail("Read(%d, %d): memory %v, disk %v", off, max, merr, derr)
			}
			// The disk log stops a read at the end of a segment; what it
			// returns must start the memory log's answer.
			if merr == nil && (!bytes.HasPrefix(mb, db) || (len(mb) > 0) != (len(db) > 0)) {
				fail("Read(%d, %d): %d bytes in memory, %d on disk, not a prefix", off, max, len(mb), len(db))
			}
			// What the tail serves from memory is what the files hold.
			fb, ferr := d.Log.Read(off, max)
			if (ferr == nil) != (derr == nil) || (ferr == nil && (!bytes.HasPrefix(db, fb) || (len(db) > 0) != (len(fb) > 0))) {
				fail("Read(%d, %d): %d bytes from the tail (%v), %d from the files (%v)", off, max, len(db), derr, len(fb), ferr)
			}
		}
	}
}

func records(base int64, epoch int32, n int) []storage.Record {
	recs := make([]storage.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "record %d of epoch %d", base+int64(i), epoch)
	}
	return recs
}

// batch encodes records as one batch at the memory log's end, as a leader
// sends it to a follower.
func (p *logPair) batch(epoch int32, n int, control bool) []byte {
	recs := records(p.mem.LogEndOffset(), epoch, n)
	return storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: p.mem.LogEndOffset(), LeaderEpoch: epoch, Control: control, Timestamp: 1}, recs)
}

// advanceTo moves the log start to a snapshot, as a node does after
// writing one.
func advanceTo(id raft.SnapshotID) func(l raft.Log) error {
	return func(l raft.Log) error {
		if err := l.AdvanceLogStart(id.EndOffset); err != nil {
			return err
		}
		return l.DeleteSnapshotsBefore(id)
	}
}

// restartAt restarts the log at a snapshot, as a follower does after
// fetching one past its log end.
func restartAt(id raft.SnapshotID) func(l raft.Log) error {
	return func(l raft.Log) error {
		if err := l.TruncateFullyAndStartAt(id.EndOffset); err != nil {
			return err
		}
		return l.DeleteSnapshotsBefore(id)
	}
}

func (p *logPair) snapshot(id raft.SnapshotID, data []byte) {
	p.t.Helper()
	p.ok(fmt.Sprintf("snapshot %v", id), func(l raft.Log) error {
		w, err := l.CreateSnapshot(id)
		if err != nil {
			return err
		}
		defer w.Abort()
		// Two chunks, as FetchSnapshot delivers them.
		if err := w.Append(data[:len(data)/2]); err != nil {
			return err
		}
		if err := w.Append(data[len(data)/2:]); err != nil {
			return err
		}
		if w.Size() != int64(len(data)) || w.ID() != id {
			return fmt.Errorf("writer says %v, %d bytes", w.ID(), w.Size())
		}
		return w.Freeze()
	})
	for pos := int64(0); pos <= int64(len(data)); pos += 37 {
		mb, ms, merr := p.mem.ReadSnapshot(id, pos, 50)
		db, ds, derr := p.disk.ReadSnapshot(id, pos, 50)
		if merr != nil || derr != nil || !bytes.Equal(mb, db) || ms != ds {
			p.t.Fatalf("ReadSnapshot(%v, %d): memory %d bytes of %d, %v; disk %d bytes of %d, %v", id, pos, len(mb), ms, merr, len(db), ds, derr)
		}
	}
}

// snapshotData is a snapshot as Kafka writes one, in its id's epoch: a
// SnapshotHeader control batch, the data, a SnapshotFooter control batch.
func snapshotData(epoch int32) []byte {
	recs := []storage.Record{{Value: []byte("state")}, {Value: bytes.Repeat([]byte{7}, 90)}}
	b := storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: 0, LeaderEpoch: epoch, Timestamp: 1, Control: true}, []storage.Record{storage.SnapshotHeaderRecord(1)})
	b = storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 1, LeaderEpoch: epoch, Timestamp: 1}, recs)
	return storage.AppendBatch(b, storage.BatchSpec{BaseOffset: 3, LeaderEpoch: epoch, Timestamp: 1, Control: true}, []storage.Record{storage.SnapshotFooterRecord()})
}

func TestDiskLogConformsToMemoryLog(t *testing.T) {
	p := newLogPair(t)
	p.check("open")
	appendBatch := func(epoch int32, n int) {
		t.Helper()
		recs := records(p.mem.LogEndOffset(), epoch, n)
		p.ok(fmt.Sprintf("append %d records in epoch %d", n, epoch), func(l raft.Log) error {
			base, last, err := l.AppendAsLeader(recs, epoch, 1)
			if err == nil && last-base+1 != int64(n) {
				err = fmt.Errorf("appended [%d, %d] for %d records", base, last, n)
			}
			return err
		})
	}
	appendBatch(1, 3)
	b := p.batch(1, 1, true)
	p.ok("append control batch", func(l raft.Log) error { return l.AppendAsFollower(b) })
	appendBatch(1, 5)
	appendBatch(3, 2)
	appendBatch(3, 4)

	// Appends that do not continue the log fail on both, leaving it as it was.
	stale := p.batch(2, 1, false)
	p.fails("append a lower epoch", func(l raft.Log) error { return l.AppendAsFollower(stale) })
	gap := storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: p.mem.LogEndOffset() + 5, LeaderEpoch: 3}, []storage.Record{{Value: []byte("x")}})
	p.fails("append past the end", func(l raft.Log) error { return l.AppendAsFollower(gap) })
	corrupt := p.batch(3, 2, false)
	corrupt[len(corrupt)-1] ^= 0xff
	p.fails("append a corrupt batch", func(l raft.Log) error { return l.AppendAsFollower(corrupt) })

	p.ok("flush", func(l raft.Log) error { return l.Flush() })
	appendBatch(4, 3)
	p.crash() // loses the unflushed epoch 4
	p.check("crash")

	appendBatch(5, 2)
	appendBatch(5, 6)
	truncate := func(what string, off int64, wantErr bool) {
		t.Helper()
		if p.both(what, func(l raft.Log) error { return l.TruncateTo(off) }) != wantErr {
			t.Fatalf("%s: failed %v, want %v", what, !wantErr, wantErr)
		}
	}
	end := p.mem.LogEndOffset()
	truncate("truncate inside a batch", end-3, true)
	truncate("truncate past the end", end+1, true)
	truncate("truncate to the end", end, false)
	truncate("truncate to a batch boundary", end-6, false)
	p.ok("flush", func(l raft.Log) error { return l.Flush() })

	// A snapshot inside the log moves the log start to it.
	id := raft.SnapshotID{EndOffset: 9, Epoch: 1}
	p.fails("advance past the end", func(l raft.Log) error { return l.AdvanceLogStart(p.mem.LogEndOffset() + 1) })
	p.snapshot(id, snapshotData(1))
	p.fails("create an existing snapshot", func(l raft.Log) error { _, err := l.CreateSnapshot(id); return err })
	p.fails("advance inside a batch", func(l raft.Log) error { return l.AdvanceLogStart(id.EndOffset - 1) })
	p.ok("advance log start", advanceTo(id))
	truncate("truncate below the start", 5, true)
	appendBatch(6, 2)
	p.ok("flush", func(l raft.Log) error { return l.Flush() })

	// A newer snapshot replaces the older one.
	id2 := raft.SnapshotID{EndOffset: 15, Epoch: 3}
	p.snapshot(id2, snapshotData(3))
	p.ok("advance log start again", advanceTo(id2))
	if got := p.disk.Snapshots(); len(got) != 1 || got[0] != id2 {
		t.Fatalf("disk snapshots %v, want only %v", got, id2)
	}
	if _, _, err := p.disk.ReadSnapshot(id, 0, 10); !errors.Is(err, raft.ErrSnapshotNotFound) {
		t.Fatalf("read deleted snapshot: %v", err)
	}

	// A follower that fetched a snapshot past its log end restarts there.
	id3 := raft.SnapshotID{EndOffset: 40, Epoch: 7}
	p.snapshot(id3, snapshotData(7))
	p.ok("restart at a snapshot", restartAt(id3))
	p.crash()
	p.check("crash after snapshot")
	appendBatch(8, 3)
	p.ok("flush", func(l raft.Log) error { return l.Flush() })
	p.crash()
	p.check("crash after flush")

	// A snapshot writer abandoned by a crash leaves nothing behind.
	w, err := p.disk.CreateSnapshot(raft.SnapshotID{EndOffset: 42, Epoch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(snapshotData(8)); err != nil {
		t.Fatal(err)
	}
	p.crash()
	if got := p.disk.Snapshots(); len(got) != 1 || got[0] != id3 {
		t.Fatalf("after a crash mid-snapshot: snapshots %v, want only %v", got, id3)
	}
}

// TestDiskLogConformsRandomly applies seeded random operations to both logs.
func TestDiskLogConformsRandomly(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			p := newLogPair(t)
			rng := rand.New(rand.NewPCG(seed, 99))
			epoch := int32(1)
			snapshots := 0
			done := map[string]int{} // successful operations by kind
			for range 250 {
				what := ""
				switch k := rng.IntN(20); {
				case k < 10:
					if rng.IntN(4) == 0 {
						epoch += int32(rng.IntN(2))
					}
					if rng.IntN(2) == 0 {
						// A leader's append: the tail keeps the bytes it encoded.
						recs := records(p.mem.LogEndOffset(), epoch, 1+rng.IntN(4))
						what = fmt.Sprintf("append %d records as leader", len(recs))
						if !p.both(what, func(l raft.Log) error { _, _, err := l.AppendAsLeader(recs, epoch, 1); return err }) {
							done["append"]++
						}
						break
					}
					b := p.batch(epoch, 1+rng.IntN(4), rng.IntN(5) == 0)
					what = fmt.Sprintf("append %d bytes", len(b))
					if !p.both(what, func(l raft.Log) error { return l.AppendAsFollower(b) }) {
						done["append"]++
					}
				case k < 13:
					what = "flush"
					p.both(what, func(l raft.Log) error { return l.Flush() })
				case k < 15:
					off := p.mem.LogStartOffset() + rng.Int64N(p.mem.LogEndOffset()-p.mem.LogStartOffset()+1)
					what = fmt.Sprintf("truncate to %d", off)
					if !p.both(what, func(l raft.Log) error { return l.TruncateTo(off) }) {
						done["truncate"]++
					}
				case k < 16:
					what = "crash"
					p.crash()
					p.check(what)
				case k < 18 && snapshots < 4:
					// Snapshot at the end of a random batch.
					off := p.mem.LogStartOffset() + rng.Int64N(p.mem.LogEndOffset()-p.mem.LogStartOffset()+1)
					data, err := p.mem.Read(off, 1)
					if err != nil || len(data) == 0 {
						continue
					}
					bt, err := storage.DecodeBatch(data)
					if err != nil {
						t.Fatal(err)
					}
					id := raft.SnapshotID{EndOffset: bt.NextOffset(), Epoch: bt.PartitionLeaderEpoch}
					if latest, ok := p.mem.LatestSnapshot(); ok && latest.EndOffset >= id.EndOffset {
						continue
					}
					snapshots++
					p.snapshot(id, snapshotData(id.Epoch))
					what = fmt.Sprintf("advance log start to %v", id)
					p.ok(what, advanceTo(id))
					done["advance"]++
				case k < 19 && snapshots < 4:
					epoch++
					id := raft.SnapshotID{EndOffset: p.mem.LogEndOffset() + 1 + rng.Int64N(5), Epoch: epoch}
					snapshots++
					p.snapshot(id, snapshotData(epoch))
					what = fmt.Sprintf("restart at snapshot %v", id)
					p.ok(what, restartAt(id))
					done["snapshot"]++
				}
			}
			if done["append"] < 30 || done["truncate"] < 3 || done["advance"]+done["snapshot"] < 2 {
				t.Errorf("too little happened: %v", done)
			}
		})
	}
}
