package quorum

import (
	"errors"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// NewListenerQueue runs l on a goroutine of its own, as each of Kafka's
// RaftClient listeners (the MetadataLoader, the controller's) hands what
// the raft thread tells it to an event queue of its own: the raft client's
// loop only copies committed batches into the queue, so a listener's slow
// work (decoding records, building a metadata image) never holds up the
// Fetches, appends and elections the loop serves.
//
// The queue keeps Listener's order: l is told everything in the order the
// loop told the queue. Commits queued back to back reach l as one
// HandleCommit, so a listener that falls behind catches up in fewer,
// larger steps. What it loosens is the Commit ordering: a Commit completes
// once its batch is queued, and l may apply it a moment later, as a
// Kafka controller's append future completes before its MetadataLoader
// has published the records. HandleLoadSnapshot and SnapshotRecords wait
// for l to apply everything queued before them and then to do what they
// ask; BeginShutdown waits for l to apply everything queued and to hear
// BeginShutdown, so nothing of l runs after its incarnation ends.
func NewListenerQueue(l Listener) Listener {
	q := &listenerQueue{inner: l, calls: newQueue[queued](), done: make(chan struct{})}
	go q.run()
	return q
}

// listenerQueue is NewListenerQueue's Listener. Its Listener methods
// belong to the raft client's loop; run owns inner.
type listenerQueue struct {
	inner Listener
	calls *queue[queued]
	done  chan struct{} // closed when run returns
	ended bool          // BeginShutdown was queued (loop only)
}

// queued is one call for the listener's goroutine: exactly one field set.
type queued struct {
	batches  []storage.Batch
	snapshot *raft.Snapshot
	loaded   chan<- struct{} // closed once snapshot is loaded
	leader   *raft.LeaderAndEpoch
	records  chan<- snapshotRecords
	shutdown bool
}

// snapshotRecords is SnapshotRecords' answer.
type snapshotRecords struct {
	end     int64
	records [][]byte
	err     error
}

var _ Listener = (*listenerQueue)(nil)

// errListenerEnded: the queue's listener heard BeginShutdown.
var errListenerEnded = errors.New("listener has shut down")

func (q *listenerQueue) push(it queued) { q.calls.push(it) }

// HandleCommit implements Listener: the batches are copied, since they
// alias log memory only valid during the call.
func (q *listenerQueue) HandleCommit(batches []storage.Batch) {
	if q.ended || len(batches) == 0 {
		return
	}
	q.push(queued{batches: storage.CopyBatches(batches)})
}

// HandleLoadSnapshot implements Listener: it waits for the listener to
// load the snapshot, whose records alias memory only valid during the
// call (copying them would double a large image's memory for a rare
// event).
func (q *listenerQueue) HandleLoadSnapshot(s raft.Snapshot) {
	if q.ended {
		return
	}
	loaded := make(chan struct{})
	q.push(queued{snapshot: &s, loaded: loaded})
	<-loaded
}

// HandleLeaderChange implements Listener.
func (q *listenerQueue) HandleLeaderChange(l raft.LeaderAndEpoch) {
	if q.ended {
		return
	}
	q.push(queued{leader: &l})
}

// SnapshotRecords implements Listener: the listener's state once it has
// applied everything queued before the call.
func (q *listenerQueue) SnapshotRecords() (int64, [][]byte, error) {
	if q.ended {
		return 0, nil, errListenerEnded
	}
	reply := make(chan snapshotRecords, 1)
	q.push(queued{records: reply})
	r := <-reply
	return r.end, r.records, r.err
}

// BeginShutdown implements Listener: it returns once the listener has
// applied everything queued and heard BeginShutdown itself.
func (q *listenerQueue) BeginShutdown() {
	if !q.ended {
		q.ended = true
		q.push(queued{shutdown: true})
	}
	<-q.done
}

func (q *listenerQueue) run() {
	defer close(q.done)
	var commit []storage.Batch
	flush := func() {
		if len(commit) > 0 {
			q.inner.HandleCommit(commit)
			commit = nil
		}
	}
	for range q.calls.wake {
		for _, it := range q.calls.take() {
			if it.batches != nil {
				if commit == nil {
					commit = it.batches // one commit alone is handed as it came
				} else {
					commit = append(commit[:len(commit):len(commit)], it.batches...)
				}
				continue
			}
			flush()
			switch {
			case it.snapshot != nil:
				q.inner.HandleLoadSnapshot(*it.snapshot)
				close(it.loaded)
			case it.leader != nil:
				q.inner.HandleLeaderChange(*it.leader)
			case it.records != nil:
				end, recs, err := q.inner.SnapshotRecords()
				it.records <- snapshotRecords{end: end, records: recs, err: err}
			case it.shutdown:
				q.inner.BeginShutdown()
				return
			}
		}
		flush()
	}
}
