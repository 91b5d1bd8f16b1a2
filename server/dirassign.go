package server

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// dirAssignRetry is how soon an assignment the controller has not
// accepted is sent again.
const dirAssignRetry = 200 * time.Millisecond

// assignKey is one replica of this broker, by topic id.
type assignKey struct {
	topicID   record.Uuid
	partition int32
}

// dirAssigner tells the active controller which log directory a replica
// of this broker is in (Kafka's AssignmentsManager, KIP-858): a damaged
// replica goes to record.DirectoryLost, so that the controller moves the
// leadership and the ISR away from it, and back to the broker's own
// directory once it has fetched what it lost. An assignment waits for the
// broker's registration and is sent again until the controller answers
// it; a newer assignment of the same replica replaces one not yet sent.
type dirAssigner struct {
	rm   *ReplicaManager
	wake chan struct{}

	mu      sync.Mutex
	pending map[assignKey]record.Uuid
}

func newDirAssigner(rm *ReplicaManager) *dirAssigner {
	return &dirAssigner{rm: rm, wake: make(chan struct{}, 1), pending: map[assignKey]record.Uuid{}}
}

// assign queues the assignment of a replica to dir.
func (a *dirAssigner) assign(topicID record.Uuid, partition int32, dir record.Uuid) {
	a.mu.Lock()
	a.pending[assignKey{topicID, partition}] = dir
	a.mu.Unlock()
	signal(a.wake)
}

// forget drops what is queued for a replica the broker no longer hosts.
func (a *dirAssigner) forget(topicID record.Uuid, partition int32) {
	a.mu.Lock()
	delete(a.pending, assignKey{topicID, partition})
	a.mu.Unlock()
}

// run sends what is queued, on the manager's goroutine of its own.
func (a *dirAssigner) run() {
	defer a.rm.wg.Done()
	t := a.rm.clock.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-a.rm.ctx.Done():
			return
		case <-a.wake:
		case <-t.C:
		}
		if a.send() {
			resetTimer(t, dirAssignRetry)
		} else {
			resetTimer(t, time.Hour)
		}
	}
}

// send sends every queued assignment in one AssignReplicasToDirs and
// reports whether any is still queued.
func (a *dirAssigner) send() (left bool) {
	a.mu.Lock()
	sending := make(map[assignKey]record.Uuid, len(a.pending))
	for k, d := range a.pending {
		sending[k] = d
	}
	a.mu.Unlock()
	if len(sending) == 0 {
		return false
	}
	epoch := a.rm.brokerEpoch()
	if epoch < 0 {
		return true // not registered yet
	}
	req := kmsg.NewPtrAssignReplicasToDirsRequest()
	req.BrokerID, req.BrokerEpoch = a.rm.id, epoch
	for k, dir := range sending {
		req.Directories = appendAssignment(req.Directories, dir, k)
	}
	ctx, cancel := a.rm.clock.WithTimeout(a.rm.ctx, 5*time.Second)
	resp, err := a.rm.ctl.send(ctx, a.rm.controller(), req)
	cancel()
	if err != nil {
		a.rm.log.Debug("AssignReplicasToDirs not sent", "err", err)
		return true
	}
	ar := resp.(*kmsg.AssignReplicasToDirsResponse)
	if ar.ErrorCode != 0 {
		a.rm.log.Debug("AssignReplicasToDirs refused", "err", kerr.ErrorForCode(ar.ErrorCode))
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, d := range ar.Directories {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				k := assignKey{t.TopicID, p.Partition}
				if a.pending[k] != record.Uuid(d.ID) || sending[k] != record.Uuid(d.ID) {
					continue // assigned anew meanwhile
				}
				switch p.ErrorCode {
				case 0, kerr.UnknownTopicID.Code, kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code:
					// Done, or the replica is no longer this broker's.
					delete(a.pending, k)
				default:
					a.rm.log.Debug("directory assignment refused", "topicId", record.Uuid(t.TopicID), "partition", p.Partition,
						"err", kerr.ErrorForCode(p.ErrorCode))
				}
			}
		}
	}
	return len(a.pending) > 0
}

// appendAssignment adds replica k's assignment to dir to the request's
// directories.
func appendAssignment(dirs []kmsg.AssignReplicasToDirsRequestDirectory, dir record.Uuid, k assignKey) []kmsg.AssignReplicasToDirsRequestDirectory {
	i := 0
	for i < len(dirs) && dirs[i].ID != dir {
		i++
	}
	if i == len(dirs) {
		d := kmsg.NewAssignReplicasToDirsRequestDirectory()
		d.ID = dir
		dirs = append(dirs, d)
	}
	d := &dirs[i]
	j := 0
	for j < len(d.Topics) && d.Topics[j].TopicID != k.topicID {
		j++
	}
	if j == len(d.Topics) {
		t := kmsg.NewAssignReplicasToDirsRequestDirectoryTopic()
		t.TopicID = k.topicID
		d.Topics = append(d.Topics, t)
	}
	p := kmsg.NewAssignReplicasToDirsRequestDirectoryTopicPartition()
	p.Partition = k.partition
	d.Topics[j].Partitions = append(d.Topics[j].Partitions, p)
	return dirs
}
