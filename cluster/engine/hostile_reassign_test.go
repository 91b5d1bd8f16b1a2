package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A stranger's reassignment requests near the 1 MiB a request may hold:
// a target of 200,000 replicas (every one unregistered, or one broker
// named 200,000 times), the canary partition named 10,000 times (Kafka's
// MAX_RECORDS_PER_USER_OP), and ListPartitionReassignments and
// DescribeLogDirs naming 200,000 partitions. Each is answered, nothing is
// written, and the playground serves on with the canary's replicas as
// they were. The 10,000 may take the controller longer than the fast
// profile's 200 ms a forward tries (under the race detector, on a loaded
// machine), and then REQUEST_TIMED_OUT is the broker's answer.
func TestHostileReassignments(t *testing.T) {
	ht := openHostile(t)
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	before := canaryReplicas(t, ht)

	huge := make([]int32, 200_000)
	for i := range huge {
		huge[i] = int32(1000 + i)
	}
	same := make([]int32, 200_000)
	for i := range same {
		same[i] = 101
	}
	for _, c := range []struct {
		what     string
		replicas []int32
		times    int
		want     []int16
	}{
		// Under -race on a loaded machine, checking 200,000 replicas may
		// outlast the forward's timeout: refused or timed out, never served.
		{"200,000 unregistered brokers", huge, 1, []int16{kerr.InvalidReplicaAssignment.Code, kerr.RequestTimedOut.Code}},
		{"broker 101 200,000 times", same, 1, []int16{kerr.InvalidReplicaAssignment.Code, kerr.RequestTimedOut.Code}},
		{"the canary partition 10,000 times, as it is", before, 10_000, []int16{0, kerr.RequestTimedOut.Code}},
	} {
		req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
		rt.Topic = canaryTopic
		for range c.times {
			rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			rp.Replicas = c.replicas
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("AlterPartitionReassignments of %s: %v", c.what, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != c.times {
			t.Fatalf("AlterPartitionReassignments of %s: %d topics answered", c.what, len(resp.Topics))
		}
		for _, p := range resp.Topics[0].Partitions {
			if !slices.Contains(c.want, p.ErrorCode) {
				t.Fatalf("AlterPartitionReassignments of %s: %v, want one of %v", c.what, kerr.ErrorForCode(p.ErrorCode), c.want)
			}
		}
	}

	list := kmsg.NewPtrListPartitionReassignmentsRequest()
	lt := kmsg.NewListPartitionReassignmentsRequestTopic()
	lt.Topic = canaryTopic
	for i := range int32(200_000) {
		lt.Partitions = append(lt.Partitions, i)
	}
	list.Topics = append(list.Topics, lt)
	if resp, err := list.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Fatalf("ListPartitionReassignments of 200,000 partitions: %v %+v", err, resp)
	}

	dirs := kmsg.NewPtrDescribeLogDirsRequest()
	dt := kmsg.NewDescribeLogDirsRequestTopic()
	dt.Topic = canaryTopic
	dt.Partitions = lt.Partitions
	dirs.Topics = append(dirs.Topics, dt)
	for _, id := range []int{101, 102, 103} {
		r, err := cl.Broker(id).Request(ctx, dirs)
		if err != nil {
			t.Fatalf("DescribeLogDirs of 200,000 partitions at broker %d: %v", id, err)
		}
		resp := r.(*kmsg.DescribeLogDirsResponse)
		if len(resp.Dirs) != 1 || len(resp.Dirs[0].Topics) != 1 || len(resp.Dirs[0].Topics[0].Partitions) != 1 {
			t.Fatalf("DescribeLogDirs of 200,000 partitions at broker %d: %+v", id, resp)
		}
	}

	ht.checkServing(t, "after the reassignment requests")
	if after := canaryReplicas(t, ht); !slices.Equal(after, before) {
		t.Fatalf("the canary's replicas went from %v to %v", before, after)
	}
}

func canaryReplicas(t *testing.T, ht *hostileTarget) []int32 {
	t.Helper()
	v := ht.p.View()
	p, ok := v.Partition(canaryTopic, 0)
	if !ok {
		t.Fatal("no canary partition")
	}
	return p.Replicas
}
