package raft_test

import (
	"errors"
	"testing"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// storage.Log has every method of Log but the snapshot half, which
// storage.Snapshots provides; a driver's adapter only joins the two.
var (
	_ interface {
		LogStartOffset() int64
		LogEndOffset() int64
		LastEpoch() int32
		EndOffsetForEpoch(int32) (int32, int64)
		AppendAsLeader([]storage.Record, int32, int64) (int64, int64, error)
		AppendControl([]storage.Record, int32, int64) (int64, int64, error)
		AppendAsFollower([]byte) error
		Read(int64, int) ([]byte, error)
		TruncateTo(int64) error
		AdvanceLogStart(int64) error
		TruncateFullyAndStartAt(int64) error
		Flush() error
		LastFlushedOffset() int64
	} = (*storage.Log)(nil)
	_ raft.QuorumStateStore = (*storage.QuorumStateFile)(nil)
	_ raft.Log              = (*raft.MemoryLog)(nil)
)

func TestMemoryLogCrashLosesUnflushedTail(t *testing.T) {
	l := raft.NewMemoryLog()
	leaderBatch(t, l, 0, 1, "a", "b") // flushed
	if _, _, err := l.AppendAsLeader([]storage.Record{{Value: []byte("c")}}, 2, 0); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 3 || l.LastFlushedOffset() != 2 {
		t.Fatalf("end %d, flushed %d", l.LogEndOffset(), l.LastFlushedOffset())
	}
	l.Crash()
	if l.LogEndOffset() != 2 || l.LastEpoch() != 1 {
		t.Fatalf("after crash: end %d, last epoch %d", l.LogEndOffset(), l.LastEpoch())
	}
}

func TestMemoryLogEpochsAndTruncation(t *testing.T) {
	l := raft.NewMemoryLog()
	leaderBatch(t, l, 0, 1, "a", "b")
	leaderBatch(t, l, 2, 3, "c")
	leaderBatch(t, l, 3, 3, "d", "e")
	for _, tc := range []struct {
		epoch, wantEpoch int32
		wantEnd          int64
	}{{0, -1, -1}, {1, 1, 2}, {2, 1, 2}, {3, 3, 5}, {9, 3, 5}} {
		if e, end := l.EndOffsetForEpoch(tc.epoch); e != tc.wantEpoch || end != tc.wantEnd {
			t.Errorf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", tc.epoch, e, end, tc.wantEpoch, tc.wantEnd)
		}
	}
	if err := l.TruncateTo(4); err == nil {
		t.Fatal("truncated inside a batch")
	}
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if e, end := l.EndOffsetForEpoch(3); e != 1 || end != 2 || l.LastEpoch() != 1 {
		t.Fatalf("after truncation: epoch %d ends at %d, last epoch %d", e, end, l.LastEpoch())
	}
	if _, _, err := l.AppendAsLeader([]storage.Record{{Value: []byte("x")}}, 0, 0); err == nil {
		t.Fatal("appended a batch with an older epoch")
	}
}

func TestMemoryLogSnapshots(t *testing.T) {
	l := raft.NewMemoryLog()
	leaderBatch(t, l, 0, 1, "a", "b")
	leaderBatch(t, l, 2, 2, "c")
	id := raft.SnapshotID{EndOffset: 2, Epoch: 1}
	w, err := l.CreateSnapshot(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.LatestSnapshot(); ok {
		t.Fatal("unfrozen snapshot visible")
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	chunk, size, err := l.ReadSnapshot(id, 4, 3)
	if err != nil || string(chunk) != "456" || size != 10 {
		t.Fatalf("read snapshot: %q, %d, %v", chunk, size, err)
	}
	if _, _, err := l.ReadSnapshot(raft.SnapshotID{EndOffset: 9}, 0, 1); !errors.Is(err, raft.ErrSnapshotNotFound) {
		t.Fatalf("unknown snapshot: %v", err)
	}
	if err := l.AdvanceLogStart(2); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 2 || l.LastEpoch() != 2 {
		t.Fatalf("start %d, last epoch %d", l.LogStartOffset(), l.LastEpoch())
	}
	if _, err := l.Read(1, 100); err == nil {
		t.Fatal("read below the log start")
	}
	// A writer that outlives a crash cannot complete its snapshot.
	w2, _ := l.CreateSnapshot(raft.SnapshotID{EndOffset: 3, Epoch: 2})
	l.Crash()
	if err := w2.Freeze(); err == nil {
		t.Fatal("snapshot frozen after a crash")
	}
}
