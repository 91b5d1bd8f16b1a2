package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/kafkahash"
	"github.com/kraftlab/kraftlab/server/group"
)

// groupCluster is three controllers and brokers 101-103, with a
// __consumer_offsets of 3 partitions replicated to all three and a short
// initial rebalance delay.
func groupCluster(t *testing.T) *testServers {
	t.Helper()
	return groupClusterWith(t, func(*Config) {})
}

// groupClusterWith is groupCluster with more of each server's settings
// changed by set.
func groupClusterWith(t *testing.T, set func(*Config)) *testServers {
	t.Helper()
	ts := startClusterWith(t, 600*time.Millisecond, []int32{101, 102, 103}, func(c *Config) {
		c.Settings.BrokerSessionTimeout = 1500 * time.Millisecond
		c.Settings.BrokerHeartbeatInterval = 100 * time.Millisecond
		c.Settings.ReplicaFetchWaitMax = 100 * time.Millisecond
		c.Settings.OffsetsTopicNumPartitions = 3
		c.Settings.OffsetsTopicReplicationFactor = 3
		c.Settings.GroupInitialRebalanceDelay = 50 * time.Millisecond
		set(c)
	})
	for _, id := range []int32{101, 102, 103} {
		b := ts.byID[id]
		waitFor(t, fmt.Sprintf("broker %d RUNNING", id), func() bool { return b.Lifecycle().State() == BrokerRunning })
	}
	return ts
}

// groupConsumer is a kgo group consumer of topic in group g that commits
// by hand what each poll returned.
func groupConsumer(t *testing.T, seeds []string, g, topic string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(g), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.MetadataMinAge(50*time.Millisecond), kgo.FetchMaxWait(200*time.Millisecond), kgo.HeartbeatInterval(300*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// pollInto polls cl once, for up to a second, adds what it read to got
// and commits it.
func pollInto(t *testing.T, cl *kgo.Client, got map[string]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fs := cl.PollFetches(ctx)
	fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)]++ })
	if fs.NumRecords() > 0 {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := cl.CommitUncommittedOffsets(cctx); err != nil {
			t.Logf("commit: %v", err)
		}
	}
}

func groupValues(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// describe is group g as the coordinator describes it.
func describe(t *testing.T, adm *kadm.Client, g string) kadm.DescribedGroup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := adm.DescribeGroups(ctx, g)
	if err != nil {
		return kadm.DescribedGroup{}
	}
	return ds[g]
}

// kgo's group consumers over real sockets: one reads every record once;
// a second splits the partitions with it, each record read by one of
// them; when the second leaves, the first takes every partition; and a
// consumer started after the first closed goes on from the committed
// offsets, reading nothing twice.
func TestGroupConsumersShareTheirTopic(t *testing.T) {
	ts := groupCluster(t)
	seeds := ts.brokerAddrs(101, 102, 103)
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	adm := kadm.NewClient(prod)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if resp, err := adm.CreateTopic(ctx, 4, 3, nil, "orders"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	produce := func(vs []string) {
		if acked := produceValues(t, prod, "orders", vs); len(acked) != len(vs) {
			t.Fatalf("%d of %d records acknowledged", len(acked), len(vs))
		}
	}

	first := groupValues("first", 100)
	produce(first)
	a := groupConsumer(t, seeds, "readers", "orders")
	defer a.Close()
	gotA := map[string]int{}
	waitFor(t, "consumer A reading the first records", func() bool {
		pollInto(t, a, gotA)
		return len(gotA) >= len(first)
	})
	for _, v := range first {
		if gotA[v] != 1 {
			t.Fatalf("%s read %d times", v, gotA[v])
		}
	}

	b := groupConsumer(t, seeds, "readers", "orders")
	bClosed := false
	defer func() {
		if !bClosed {
			b.Close()
		}
	}()
	gotB := map[string]int{}
	waitFor(t, "a stable group of two members sharing the partitions", func() bool {
		pollInto(t, a, gotA)
		pollInto(t, b, gotB)
		d := describe(t, adm, "readers")
		if d.State != "Stable" || len(d.Members) != 2 {
			return false
		}
		for _, m := range d.Members {
			ca, ok := m.Assigned.AsConsumer()
			if !ok || len(ca.Topics) == 0 || len(ca.Topics[0].Partitions) == 0 {
				return false
			}
		}
		return true
	})
	clear(gotA)
	clear(gotB)
	second := groupValues("second", 100)
	produce(second)
	waitFor(t, "both consumers reading the second records", func() bool {
		pollInto(t, a, gotA)
		pollInto(t, b, gotB)
		n := 0
		for _, v := range second {
			if gotA[v]+gotB[v] > 0 {
				n++
			}
		}
		return n == len(second)
	})
	if len(gotA) == 0 || len(gotB) == 0 {
		t.Fatalf("one consumer read everything: A %d, B %d", len(gotA), len(gotB))
	}
	for _, v := range second {
		if gotA[v]+gotB[v] != 1 {
			t.Fatalf("%s read %d times by A, %d by B", v, gotA[v], gotB[v])
		}
	}

	b.Close() // leaves the group
	bClosed = true
	waitFor(t, "A alone in the group with every partition", func() bool {
		pollInto(t, a, gotA)
		d := describe(t, adm, "readers")
		if d.State != "Stable" || len(d.Members) != 1 {
			return false
		}
		ca, ok := d.Members[0].Assigned.AsConsumer()
		return ok && len(ca.Topics) == 1 && len(ca.Topics[0].Partitions) == 4
	})
	clear(gotA)
	third := groupValues("third", 60)
	produce(third)
	waitFor(t, "A reading all the third records", func() bool {
		pollInto(t, a, gotA)
		for _, v := range third {
			if gotA[v] == 0 {
				return false
			}
		}
		return true
	})
	a.Close()

	fourth := groupValues("fourth", 40)
	produce(fourth)
	c := groupConsumer(t, seeds, "readers", "orders")
	defer c.Close()
	gotC := map[string]int{}
	waitFor(t, "a new consumer reading the fourth records", func() bool {
		pollInto(t, c, gotC)
		for _, v := range fourth {
			if gotC[v] == 0 {
				return false
			}
		}
		return true
	})
	for v := range gotC {
		if !slices.Contains(fourth, v) {
			t.Fatalf("the restarted consumer read %s again (read %v)", v, slices.Sorted(maps.Keys(gotC)))
		}
	}
}

// coordinatorOf asks broker from where group g's coordinator is.
func coordinatorOf(t *testing.T, addr, g string) int32 {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKeys = 4, []string{g}
	resp := do(t, addr, req).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
		return -1
	}
	return resp.Coordinators[0].NodeID
}

// Offsets committed to a group are written to its __consumer_offsets
// partition with acks=all: when the coordinator's broker is killed, the
// partition's new leader loads them and answers OffsetFetch with them.
func TestCommittedOffsetsSurviveTheCoordinatorsKill(t *testing.T) {
	ts := groupCluster(t)
	seeds := ts.brokerAddrs(101, 102, 103)
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(50*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var coord int32 = -1
	waitFor(t, "a coordinator for group ledger", func() bool {
		coord = coordinatorOf(t, seeds[0], "ledger")
		return coord > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if resp, err := adm.CreateTopic(ctx, 2, 3, nil, "events"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "ledger", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "events"
	for p, o := range []int64{41, 7} {
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Partition, cp.Offset, cp.LeaderEpoch = int32(p), o, -1
		ct.Partitions = append(ct.Partitions, cp)
	}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	waitFor(t, "a committed offset", func() bool {
		resp, err := commit.RequestWith(ctx, cl)
		if err != nil {
			return false
		}
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Logf("commit: %v", kerr.ErrorForCode(p.ErrorCode))
				return false
			}
		}
		return true
	})
	n := int32(3)
	p := kafkahash.GroupPartition("ledger", n)
	t.Logf("group ledger on partition %d, coordinator %d", p, coord)
	if err := ts.byID[coord].Kill(); err != nil {
		t.Fatal(err)
	}
	other := ts.byID[101].Addr()
	if coord == 101 {
		other = ts.byID[102].Addr()
	}
	waitFor(t, "another coordinator", func() bool {
		c := coordinatorOf(t, other, "ledger")
		return c > 0 && c != coord
	})
	// A client that knew the old coordinator keeps dialling it: the
	// offsets are read by a new one.
	var alive []string
	for _, id := range []int32{101, 102, 103} {
		if id != coord {
			alive = append(alive, ts.byID[id].Addr())
		}
	}
	waitFor(t, "the committed offsets from the new coordinator", func() bool {
		got, ok := committedOffsets(ctx, t, alive, "ledger", "events")
		return ok && got[0] == 41 && got[1] == 7
	})
}

// committedOffsets asks brokers at addrs (with a fresh client: one that
// knew the killed coordinator keeps dialling it for a while) for group's
// committed offsets of topic, by partition; false until a coordinator
// answers.
func committedOffsets(ctx context.Context, t *testing.T, addrs []string, group, topic string) (map[int32]int64, bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.MetadataMinAge(50*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fg := kmsg.NewOffsetFetchRequestGroup()
	fg.Group = group
	fetch.Groups = []kmsg.OffsetFetchRequestGroup{fg}
	resp, err := fetch.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		return nil, false
	}
	got := map[int32]int64{}
	for _, rt := range resp.Groups[0].Topics {
		for _, p := range rt.Partitions {
			if rt.Topic == topic {
				got[p.Partition] = p.Offset
			}
		}
	}
	return got, true
}

// FindCoordinator makes __consumer_offsets on first use, but not with
// fewer brokers than its replication factor (Kafka's 3 here, one broker):
// it answers COORDINATOR_NOT_AVAILABLE, as it does for transactional ids,
// saying there is no transaction coordinator.
func TestFindCoordinatorWithoutEnoughBrokers(t *testing.T) {
	ts := startServers(t)
	b := ts.byID[101]
	waitFor(t, "broker RUNNING", func() bool { return b.Lifecycle() != nil && b.Lifecycle().State() == BrokerRunning })
	for range 3 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKey = 3, "g"
		resp := do(t, b.Addr(), req).(*kmsg.FindCoordinatorResponse)
		if resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || resp.NodeID != -1 {
			t.Fatalf("FindCoordinator with one broker: %+v", resp)
		}
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, 1, []string{"txn"}
	resp := do(t, b.Addr(), req).(*kmsg.FindCoordinatorResponse)
	if c := resp.Coordinators[0]; c.ErrorCode != kerr.CoordinatorNotAvailable.Code || c.ErrorMessage == nil {
		t.Fatalf("FindCoordinator of a transactional id: %+v", c)
	}
	if b.image().Topics().TopicByName(group.OffsetsTopic) != nil {
		t.Fatal("__consumer_offsets made with fewer brokers than its replication factor")
	}
}

// Every version of FindCoordinator names the leader of the group's
// partition: one key before v4, a batch from v4 on.
func TestFindCoordinatorVersions(t *testing.T) {
	ts := groupCluster(t)
	addr := ts.byID[102].Addr()
	waitFor(t, "a coordinator", func() bool { return coordinatorOf(t, addr, "g1") > 0 })
	img := ts.byID[102].image()
	leaderOf := func(g string) int32 {
		return img.Topics().TopicByName(group.OffsetsTopic).Partition(kafkahash.GroupPartition(g, 3)).Leader
	}
	for v := int16(0); v <= 3; v++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKey = v, "g1"
		resp := do(t, addr, req).(*kmsg.FindCoordinatorResponse)
		want := ts.byID[leaderOf("g1")].Addr()
		if resp.ErrorCode != 0 || resp.NodeID != leaderOf("g1") || fmt.Sprintf("%s:%d", resp.Host, resp.Port) != want {
			t.Errorf("v%d: %+v, want node %d at %s", v, resp, leaderOf("g1"), want)
		}
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKeys = 6, []string{"g1", "g2", "g3", ""}
	resp := do(t, addr, req).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != 4 {
		t.Fatalf("v6 answered %d keys", len(resp.Coordinators))
	}
	for _, c := range resp.Coordinators[:3] {
		if c.ErrorCode != 0 || c.NodeID != leaderOf(c.Key) {
			t.Errorf("v6 %s: %+v, want node %d", c.Key, c, leaderOf(c.Key))
		}
	}
	if c := resp.Coordinators[3]; c.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("v6 empty key: %+v", c)
	}
}

// The admin's view of groups: a simple commit (generation -1) makes an
// empty group that ListGroups and DescribeGroups show; OffsetDelete
// drops one partition's offset; DeleteGroups deletes the group with its
// offsets, after which it is unknown.
func TestGroupAdminAPIs(t *testing.T) {
	ts := groupCluster(t)
	seeds := ts.brokerAddrs(101, 102, 103)
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(50*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 3, nil, "audit"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "admins", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "audit"
	for p := range int32(2) {
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Partition, cp.Offset = p, 10+int64(p)
		ct.Partitions = append(ct.Partitions, cp)
	}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	waitFor(t, "a simple commit", func() bool {
		resp, err := commit.RequestWith(ctx, cl)
		return err == nil && resp.Topics[0].Partitions[0].ErrorCode == 0 && resp.Topics[0].Partitions[1].ErrorCode == 0
	})

	list, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, cl)
	if err != nil || list.ErrorCode != 0 || len(list.Groups) != 1 || list.Groups[0].Group != "admins" || list.Groups[0].GroupState != "Empty" || list.Groups[0].GroupType != "classic" {
		t.Fatalf("ListGroups: %+v, %v", list, err)
	}
	desc := kmsg.NewPtrDescribeGroupsRequest()
	desc.Groups = []string{"admins"}
	d, err := desc.RequestWith(ctx, cl)
	if err != nil || len(d.Groups) != 1 || d.Groups[0].ErrorCode != 0 || d.Groups[0].State != "Empty" {
		t.Fatalf("DescribeGroups: %+v, %v", d, err)
	}

	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "admins"
	odt := kmsg.NewOffsetDeleteRequestTopic()
	odt.Topic = "audit"
	odp := kmsg.NewOffsetDeleteRequestTopicPartition()
	odp.Partition = 0
	odt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{odp}
	od.Topics = []kmsg.OffsetDeleteRequestTopic{odt}
	if resp, err := od.RequestWith(ctx, cl); err != nil || resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("OffsetDelete: %+v, %v", resp, err)
	}
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fg := kmsg.NewOffsetFetchRequestGroup()
	fg.Group = "admins"
	fetch.Groups = []kmsg.OffsetFetchRequestGroup{fg}
	f, err := fetch.RequestWith(ctx, cl)
	if err != nil || len(f.Groups) != 1 || len(f.Groups[0].Topics) != 1 || len(f.Groups[0].Topics[0].Partitions) != 1 || f.Groups[0].Topics[0].Partitions[0].Offset != 11 {
		t.Fatalf("OffsetFetch after OffsetDelete of partition 0: %+v, %v", f, err)
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"admins"}
	if resp, err := del.RequestWith(ctx, cl); err != nil || resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("DeleteGroups: %+v, %v", resp, err)
	}
	if resp, err := del.RequestWith(ctx, cl); err != nil || resp.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("DeleteGroups again: %+v, %v", resp, err)
	}
	d, err = desc.RequestWith(ctx, cl)
	if err != nil || d.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("DescribeGroups of a deleted group: %+v, %v", d, err)
	}
	f, err = fetch.RequestWith(ctx, cl)
	if err != nil || len(f.Groups[0].Topics) != 0 {
		t.Fatalf("OffsetFetch of a deleted group: %+v, %v", f, err)
	}

	// Only the coordinator writes to its topic.
	leader := ts.byID[101].image().Topics().TopicByName(group.OffsetsTopic).Partition(0).Leader
	topicID := ts.byID[101].image().Topics().TopicByName(group.OffsetsTopic).ID()
	rp := sendProduce(t, cl, leader, produceReq(13, 1, "", topicID, 0, batch("x")))
	if rp.ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("a client's produce to %s: %+v", group.OffsetsTopic, rp)
	}
}

// A kgo group consumer goes on across its coordinator's kill: it finds
// the new coordinator, keeps its generation (the group was loaded
// Stable), reads what came after, and its commits land there: a new
// client's OffsetFetch sees every record consumed.
func TestGroupConsumerGoesOnAcrossTheCoordinatorsKill(t *testing.T) {
	ts := groupCluster(t)
	seeds := ts.brokerAddrs(101, 102, 103)
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(prod).CreateTopic(ctx, 3, 3, nil, "flow"); err != nil {
		t.Fatalf("CreateTopic: %v (%s)", err, resp.ErrMessage)
	}
	before, after := groupValues("before", 50), groupValues("after", 50)
	if acked := produceValues(t, prod, "flow", before); len(acked) != len(before) {
		t.Fatalf("%d of %d acknowledged", len(acked), len(before))
	}
	c := groupConsumer(t, seeds, "streamers", "flow")
	defer c.Close()
	got := map[string]int{}
	waitFor(t, "the records before the kill", func() bool {
		pollInto(t, c, got)
		return len(got) >= len(before)
	})
	coord := coordinatorOf(t, seeds[0], "streamers")
	if coord < 0 {
		t.Fatal("no coordinator")
	}
	if err := ts.byID[coord].Kill(); err != nil {
		t.Fatal(err)
	}
	var alive []string
	for _, id := range []int32{101, 102, 103} {
		if id != coord {
			alive = append(alive, ts.byID[id].Addr())
		}
	}
	prod2, err := kgo.NewClient(kgo.SeedBrokers(alive...), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod2.Close()
	if acked := produceValues(t, prod2, "flow", after); len(acked) != len(after) {
		t.Fatalf("%d of %d acknowledged after the kill", len(acked), len(after))
	}
	waitFor(t, "the records after the kill", func() bool {
		pollInto(t, c, got)
		for _, v := range after {
			if got[v] == 0 {
				return false
			}
		}
		return true
	})
	waitFor(t, "the new coordinator's offsets covering all 100 records", func() bool {
		got, ok := committedOffsets(ctx, t, alive, "streamers", "flow")
		var sum int64
		for _, o := range got {
			sum += max(o, 0)
		}
		return ok && sum == int64(len(before)+len(after))
	})
}
