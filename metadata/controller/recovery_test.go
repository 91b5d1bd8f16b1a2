package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// logBook answers ReplicaLogInfo from a table, as the brokers would, and
// counts the questions.
type logBook struct {
	mu    sync.Mutex
	logs  map[int32]LogInfo
	asked []int32
}

func (b *logBook) info(_ context.Context, broker int32, _ string, _ int32) (LogInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, broker)
	l, ok := b.logs[broker]
	if !ok {
		return LogInfo{}, fmt.Errorf("broker %d does not answer", broker)
	}
	return l, nil
}

func assignDirs(broker int32, epoch int64, dir record.Uuid, topic record.Uuid, partition int32) *kmsg.AssignReplicasToDirsRequest {
	r := kmsg.NewPtrAssignReplicasToDirsRequest()
	r.BrokerID, r.BrokerEpoch = broker, epoch
	d := kmsg.NewAssignReplicasToDirsRequestDirectory()
	d.ID = dir
	t := kmsg.NewAssignReplicasToDirsRequestDirectoryTopic()
	t.TopicID = topic
	p := kmsg.NewAssignReplicasToDirsRequestDirectoryTopicPartition()
	p.Partition = partition
	t.Partitions = append(t.Partitions, p)
	d.Topics = append(d.Topics, t)
	r.Directories = append(r.Directories, d)
	return r
}

func assignCode(t *testing.T, resp kmsg.Response) int16 {
	t.Helper()
	ar := resp.(*kmsg.AssignReplicasToDirsResponse)
	if ar.ErrorCode != 0 {
		return ar.ErrorCode
	}
	return ar.Directories[0].Topics[0].Partitions[0].ErrorCode
}

// A follower whose replica is in a lost directory leaves the ISR; the
// leader's leaves the leadership too, and with no other ISR member the
// partition has no leader, keeping its last ISR member as Kafka does.
// Assigned to an online directory again, the replica is recorded there
// and may rejoin the ISR; while lost, the leader cannot add it back.
func TestLostDirectoryMovesLeadershipAndIsrAway(t *testing.T) {
	h, epochs := cluster(t, 3, Config{})
	topic := h.createTopic("d", 1, 3)
	p := topic.Partition(0)
	leader, follower := p.Replicas[0], p.Replicas[1]

	for _, bad := range []struct {
		req  *kmsg.AssignReplicasToDirsRequest
		want int16
	}{
		{assignDirs(follower, epochs[follower]+7, record.DirectoryLost, topic.ID(), 0), kerr.StaleBrokerEpoch.Code},
		{assignDirs(999, 1, record.DirectoryLost, topic.ID(), 0), kerr.BrokerIDNotRegistered.Code},
		{assignDirs(follower, epochs[follower], record.DirectoryLost, record.Uuid{9}, 0), kerr.UnknownTopicID.Code},
		{assignDirs(follower, epochs[follower], record.DirectoryLost, topic.ID(), 5), kerr.UnknownTopicOrPartition.Code},
	} {
		if code := assignCode(t, h.do(bad.req)); code != bad.want {
			t.Fatalf("%+v: error %d, want %d", bad.req, code, bad.want)
		}
	}

	if code := assignCode(t, h.do(assignDirs(follower, epochs[follower], record.DirectoryLost, topic.ID(), 0))); code != 0 {
		t.Fatalf("assign the follower to a lost directory: %d", code)
	}
	p = h.image().Topics().TopicByName("d").Partition(0)
	if p.InIsr(follower) || p.Leader != leader || p.Directory(follower) != record.DirectoryLost {
		t.Fatalf("after the follower's lost directory: leader %d isr %v dirs %v", p.Leader, p.Isr, p.Directories)
	}
	// The leader may not bring it back while its directory is lost.
	isr := map[int32]int64{}
	for _, id := range p.Replicas {
		isr[id] = epochs[id]
	}
	resp := h.do(alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, isr)).(*kmsg.AlterPartitionResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.IneligibleReplica.Code {
		t.Fatalf("expansion to a replica in a lost directory: error %d, want INELIGIBLE_REPLICA", code)
	}

	if code := assignCode(t, h.do(assignDirs(leader, epochs[leader], record.DirectoryLost, topic.ID(), 0))); code != 0 {
		t.Fatalf("assign the leader to a lost directory: %d", code)
	}
	p = h.image().Topics().TopicByName("d").Partition(0)
	third := p.Replicas[2]
	if p.Leader != third || !slices.Equal(p.Isr, []int32{third}) {
		t.Fatalf("after the leader's lost directory: leader %d isr %v, want %d alone", p.Leader, p.Isr, third)
	}

	// Repaired: back in its own directory, and eligible again.
	dir := h.image().Cluster().Broker(follower).Directories[0]
	if code := assignCode(t, h.do(assignDirs(follower, epochs[follower], dir, topic.ID(), 0))); code != 0 {
		t.Fatalf("assign the follower back: %d", code)
	}
	p = h.image().Topics().TopicByName("d").Partition(0)
	if p.Directory(follower) != dir {
		t.Fatalf("follower's directory %v, want %v", p.Directory(follower), dir)
	}
	resp = h.do(alterPartition(third, epochs[third], topic, 0, p.LeaderEpoch, p.PartitionEpoch, map[int32]int64{third: epochs[third], follower: epochs[follower]})).(*kmsg.AlterPartitionResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("expansion to the repaired replica: error %d", code)
	}
}

// When the last ISR member's replica is lost, the recovery election asks
// the other replicas for their logs and elects the newest, longest one,
// alone in the ISR and RECOVERING.
func TestRecoveryElectionPicksTheNewestLongestLog(t *testing.T) {
	book := &logBook{logs: map[int32]LogInfo{}}
	r := newUncleanRig(t, Config{ReplicaLogInfo: book.info}, nil)
	last, a, b := r.replicas[0], r.replicas[1], r.replicas[2]
	// a has the longer log, b the newer epoch: b wins.
	book.logs[a] = LogInfo{LastEpoch: 3, LogEndOffset: 900}
	book.logs[b] = LogInfo{LastEpoch: 4, LogEndOffset: 700}
	if code := assignCode(t, r.h.do(assignDirs(last, r.epochs[last], record.DirectoryLost, r.topic.ID(), 0))); code != 0 {
		t.Fatalf("assign: %d", code)
	}
	r.h.tick(time.Second)
	poll.Until(t, 10*time.Second, "a recovery leader", func() bool {
		r.h.tick(recoveryScanInterval)
		return r.partition().Leader == b
	})
	p := r.partition()
	if !slices.Equal(p.Isr, []int32{b}) || p.LeaderRecoveryState != record.LeaderRecovering {
		t.Fatalf("isr %v state %d, want [%d] RECOVERING", p.Isr, p.LeaderRecoveryState, b)
	}
	// Told once the election's batch commits, which the image may show
	// first.
	poll.Until(t, 10*time.Second, "the election told", func() bool { return len(r.h.eventsOf(EventRecoveryElection)) > 0 })
	evs := r.h.eventsOf(EventRecoveryElection)
	if len(evs) != 1 || evs[0].Leader != b || !slices.Equal(evs[0].LastIsr, []int32{last}) {
		t.Fatalf("recovery events %+v", evs)
	}
	t.Log(evs[0].Reason)
	if evs := r.h.eventsOf(EventUncleanLeaderElection); len(evs) != 0 {
		t.Fatalf("counted as unclean: %+v", evs)
	}
}

// The recovery election waits while an intact replica is fenced: it may
// hold records the live one lacks.
func TestRecoveryElectionWaitsForIntactReplicas(t *testing.T) {
	book := &logBook{logs: map[int32]LogInfo{}}
	r := newUncleanRig(t, Config{ReplicaLogInfo: book.info}, nil)
	last, a, b := r.replicas[0], r.replicas[1], r.replicas[2]
	book.logs[a] = LogInfo{LastEpoch: 1, LogEndOffset: 10}
	book.logs[b] = LogInfo{LastEpoch: 1, LogEndOffset: 20}
	r.fence(t, b)
	if code := assignCode(t, r.h.do(assignDirs(last, r.epochs[last], record.DirectoryLost, r.topic.ID(), 0))); code != 0 {
		t.Fatalf("assign: %d", code)
	}
	poll.Until(t, 10*time.Second, "the wait told", func() bool {
		r.h.tick(recoveryScanInterval)
		r.h.keepAlive(r.epochs, b)
		return len(r.h.eventsOf(EventRecoveryWaiting)) == 1
	})
	if p := r.partition(); p.HasLeader() {
		t.Fatalf("elected %d while intact replica %d was fenced", p.Leader, b)
	}
	// b returns: it is asked, and its longer log wins.
	r.h.heartbeatCaughtUp(b, r.epochs[b])
	poll.Until(t, 10*time.Second, "the returned replica elected", func() bool {
		r.h.tick(recoveryScanInterval)
		r.h.keepAlive(r.epochs)
		return r.partition().Leader == b
	})
}
