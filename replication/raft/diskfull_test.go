package raft_test

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// fullLog is a MemoryLog whose follower appends fail as on a full disk.
type fullLog struct{ *raft.MemoryLog }

func (fullLog) AppendAsFollower([]byte) error {
	return &fs.PathError{Op: "write", Path: "00000000000000000000.log", Err: syscall.ENOSPC}
}

// A follower whose log cannot take the fetched batches for want of space
// stops (Step returns the disk's error for the driver to stop the node on)
// instead of taking them for a leader's bad batches and fetching again:
// it acknowledges nothing, and its log is unchanged.
func TestFollowerStopsOnDiskFault(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil, 2)
	h.elect(1)
	h.append(1, "a")
	h.advance(time.Second)

	log := fullLog{raft.NewMemoryLog()}
	n, err := raft.New(h.config(2), log, &raft.MemoryQuorumStateStore{}, &recorder{values: map[int64]string{}}, rand.New(rand.NewPCG(2, 1)), h.now)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		h.queue = append(h.queue, n.Outbox()...)
		h.stabilize()
		for _, m := range h.take(func(m raft.Message) bool { return m.To == 2 }) {
			err = n.Step(h.now, m)
			if err != nil {
				break
			}
		}
		if err != nil {
			break
		}
		h.now = h.now.Add(10 * time.Millisecond)
		if err := n.Tick(h.now); err != nil {
			t.Fatal(err)
		}
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("follower on a full disk: %v, want ENOSPC", err)
	}
	if errors.Is(err, raft.ErrUnsafe) {
		t.Fatalf("a disk fault reported as unsafe news: %v", err)
	}
	if st := n.Status(); st.LogEndOffset != 0 || st.Role != raft.Follower {
		t.Fatalf("after the failed append: %v, log end %d", st.Role, st.LogEndOffset)
	}
}
