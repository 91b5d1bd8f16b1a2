package raft

import (
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/storage"
)

func TestVoterHistory(t *testing.T) {
	h := voterHistory{static: StaticVoters([]int32{7})}
	ids := func(s VoterSet, _ int64) []int32 { return s.IDs() }
	if got := h.last().IDs(); !slices.Equal(got, []int32{7}) || h.lastOffset() != -1 || h.kraftVersion() != KRaftVersion0 {
		t.Fatalf("empty history: %v at %d, kraft.version %d", got, h.lastOffset(), h.kraftVersion())
	}
	batch := storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: 0, Control: true},
		[]storage.Record{storage.KRaftVersionRecord(1), StaticVoters([]int32{1}).record()})
	batch = storage.AppendBatch(batch, storage.BatchSpec{BaseOffset: 2}, []storage.Record{{Value: []byte("data")}})
	batch = storage.AppendBatch(batch, storage.BatchSpec{BaseOffset: 3, LeaderEpoch: 1, Control: true}, []storage.Record{StaticVoters([]int32{1, 2}).record()})
	batch = storage.AppendBatch(batch, storage.BatchSpec{BaseOffset: 4, LeaderEpoch: 1, Control: true}, []storage.Record{StaticVoters([]int32{1, 2, 3}).record()})
	if err := h.scan(batch, -1); err != nil {
		t.Fatal(err)
	}
	if h.kraftVersion() != KRaftVersion1 || h.lastOffset() != 4 || !slices.Equal(h.last().IDs(), []int32{1, 2, 3}) {
		t.Fatalf("after the log: %v at %d, kraft.version %d", h.last(), h.lastOffset(), h.kraftVersion())
	}
	for off, want := range map[int64][]int32{-1: {7}, 0: {7}, 1: {1}, 2: {1}, 3: {1, 2}, 9: {1, 2, 3}} {
		if got := ids(h.at(off)); !slices.Equal(got, want) {
			t.Errorf("at %d: %v, want %v", off, got, want)
		}
	}
	// A truncation at 4 cuts the last set: the one before is in force.
	h.truncateNew(4)
	if !slices.Equal(h.last().IDs(), []int32{1, 2}) || h.lastOffset() != 3 {
		t.Fatalf("after truncating at 4: %v at %d", h.last(), h.lastOffset())
	}
	// A snapshot at 3 keeps what is in force there; earlier sets go.
	h.truncateOld(3)
	if len(h.sets) != 1 || h.kraftVersion() != KRaftVersion1 || !slices.Equal(ids(h.at(3)), []int32{1, 2}) {
		t.Fatalf("after the log start moved to 3: %+v, kraft.version %d", h.sets, h.kraftVersion())
	}
	// A snapshot's records are in force at its last offset.
	h.clear()
	snap := storage.AppendBatch(nil, storage.BatchSpec{Control: true}, []storage.Record{storage.SnapshotHeaderRecord(0)})
	snap = storage.AppendBatch(snap, storage.BatchSpec{BaseOffset: 1, Control: true},
		[]storage.Record{storage.KRaftVersionRecord(1), StaticVoters([]int32{4, 5}).record()})
	if err := h.scan(snap, 99); err != nil {
		t.Fatal(err)
	}
	if h.lastOffset() != 99 || h.kraftVersionAt(99) != KRaftVersion1 || !slices.Equal(h.last().IDs(), []int32{4, 5}) {
		t.Fatalf("from a snapshot: %+v", h)
	}
}

func TestVoterSetOverlappingMajority(t *testing.T) {
	s := func(ids ...int32) VoterSet { return StaticVoters(ids) }
	for _, c := range []struct {
		a, b VoterSet
		want bool
	}{
		{s(1), s(1, 2), true},
		{s(1, 2, 3), s(1, 2, 3, 4), true},
		{s(1, 2, 3), s(1, 2), true},
		{s(1, 2, 3), s(1, 4, 5), false},
		{s(1), s(2, 3), false},
	} {
		if got := c.a.OverlappingMajority(c.b); got != c.want {
			t.Errorf("%v and %v: %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
