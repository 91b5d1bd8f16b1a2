package raft_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// A push leader writes no batch bigger than one AppendEntries may carry:
// a push reads at least one whole batch, and a batch over a replica's
// frame limit would be refused by its listener on every try. A record
// that cannot fit one is refused at the append.
func TestPushLeaderBatchesFitOneAppendEntries(t *testing.T) {
	h := newHarness(t, []int32{1, 2, 3}, nil)
	base := h.config
	h.config = func(id int32) raft.Config {
		c := base(id)
		c.Replication = raft.Push
		c.AppendMaxBytes = 1024
		return c
	}
	for _, id := range []int32{1, 2, 3} {
		h.start(id)
	}
	h.elect(1)
	start := h.status(1).LogEndOffset
	values := make([]string, 40)
	for i := range values {
		values[i] = strings.Repeat("x", 100)
	}
	h.append(1, values...)
	h.advance(100 * time.Millisecond) // the linger
	data, err := h.nodes[1].log.Read(start, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	batches := 0
	if err := storage.Batches(data, func(_ int, b *storage.Batch) error {
		batches++
		if b.Size() > 1024 {
			t.Errorf("a batch of %d bytes at %d, over the 1024 one AppendEntries carries", b.Size(), b.FirstOffset)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if batches < 4 {
		t.Errorf("%d batches for 4,000 bytes of records", batches)
	}
	if _, err := h.node(1).Append(h.now, h.status(1).Epoch, [][]byte{make([]byte, 2000)}); err == nil || !strings.Contains(err.Error(), "larger than a batch may be (1024 bytes)") {
		t.Errorf("a record of 2000 bytes: %v", err)
	}
}
