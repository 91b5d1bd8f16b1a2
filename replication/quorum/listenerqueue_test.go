package quorum

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// callLog is a Listener that writes down each call, and whose first
// HandleCommit says it entered and waits for gate, so calls pile up
// behind it.
type callLog struct {
	entered chan struct{}
	gate    chan struct{}
	mu      sync.Mutex
	calls   []string
	next    int64
}

func (c *callLog) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *callLog) HandleCommit(batches []storage.Batch) {
	if c.gate != nil {
		close(c.entered)
		<-c.gate
		c.gate = nil
	}
	s := "commit"
	for i := range batches {
		recs, err := batches[i].Records()
		if err != nil {
			s += " " + err.Error()
			continue
		}
		for _, r := range recs {
			s += " " + string(r.Value)
		}
		c.next = batches[i].NextOffset()
	}
	c.add(s)
}

func (c *callLog) HandleLoadSnapshot(s raft.Snapshot) {
	c.next = s.ID.EndOffset
	c.add(fmt.Sprintf("snapshot %d %s", s.ID.EndOffset, s.Records[0].Value))
}

func (c *callLog) HandleLeaderChange(l raft.LeaderAndEpoch) {
	c.add(fmt.Sprintf("leader %d epoch %d", l.LeaderID, l.Epoch))
}

func (c *callLog) SnapshotRecords() (int64, [][]byte, error) {
	c.add(fmt.Sprintf("snapshot records at %d", c.next))
	return c.next, nil, nil
}

func (c *callLog) BeginShutdown() { c.add("shutdown") }

func (c *callLog) log() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

// oneBatch is a batch at offset of one record, decoded from a buffer the
// caller may overwrite after the call, as the log's memory is.
func oneBatch(t *testing.T, offset int64, value string) ([]storage.Batch, []byte) {
	t.Helper()
	raw := storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: offset, LeaderEpoch: 1}, []storage.Record{{Value: []byte(value)}})
	b, err := storage.DecodeBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	return []storage.Batch{b}, raw
}

// The queue hands its listener every call in order on a goroutine of its
// own: commits that queued while the listener worked arrive as one,
// copied out of the memory the caller reuses; HandleLoadSnapshot and
// SnapshotRecords see every call queued before them and return once done; BeginShutdown returns once the listener has
// heard it, and later calls are dropped.
func TestListenerQueueKeepsOrderAndCopies(t *testing.T) {
	inner := &callLog{entered: make(chan struct{}), gate: make(chan struct{})}
	q := NewListenerQueue(inner)
	for i, v := range []string{"a", "b", "c"} {
		batches, raw := oneBatch(t, int64(i), v)
		q.HandleCommit(batches)
		// The log's memory is reused once the call returns.
		copy(raw, bytes.Repeat([]byte{0xff}, len(raw)))
		if i == 0 {
			<-inner.entered
		}
	}
	q.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 2, Epoch: 5})
	batches, _ := oneBatch(t, 3, "d")
	q.HandleCommit(batches)
	if got := inner.log(); len(got) != 0 {
		t.Fatalf("the listener finished a call while its first commit was held: %q", got)
	}
	close(inner.gate)
	// A snapshot is loaded before the call returns, after what queued.
	q.HandleLoadSnapshot(raft.Snapshot{ID: raft.SnapshotID{EndOffset: 10, Epoch: 5}, Records: []storage.Record{{Offset: 9, Value: []byte("image")}}})
	if got := inner.log(); len(got) != 5 {
		t.Errorf("after HandleLoadSnapshot returned the listener heard %q", got)
	}
	end, _, err := q.SnapshotRecords()
	if err != nil || end != 10 {
		t.Fatalf("SnapshotRecords after the queued calls: end %d, %v; want 10", end, err)
	}
	q.BeginShutdown()
	q.HandleCommit(batches)
	q.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 3, Epoch: 6})
	if _, _, err := q.SnapshotRecords(); err == nil {
		t.Error("SnapshotRecords after BeginShutdown succeeded")
	}
	q.BeginShutdown() // a second call returns at once
	want := []string{
		"commit a",   // the held first call
		"commit b c", // the two that queued behind it, as one
		"leader 2 epoch 5",
		"commit d",
		"snapshot 10 image",
		"snapshot records at 10",
		"shutdown",
	}
	got := inner.log()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the listener heard\n%q\nwant\n%q", got, want)
	}
}
