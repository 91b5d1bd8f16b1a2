package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// uncleanRig is one partition of replication factor 3 whose ISR has shrunk
// to its leader alone, on three unfenced brokers.
type uncleanRig struct {
	h        *harness
	epochs   map[int32]int64
	topic    *image.TopicImage
	replicas []int32 // the partition's replica order; replicas[0] leads
}

func newUncleanRig(t *testing.T, cfg Config, configs map[string]string) *uncleanRig {
	t.Helper()
	cfg.SessionTimeout = 9 * time.Second
	if cfg.UncleanElectionInterval == 0 {
		cfg.UncleanElectionInterval = time.Minute // only the test's ticks reach it
	}
	h, epochs := cluster(t, 3, cfg)
	req := createTopic("u", 1, 3)
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		req.Topics[0].Configs = append(req.Topics[0].Configs, c)
	}
	if resp := h.do(req).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %+v", resp.Topics[0])
	}
	topic := h.image().Topics().TopicByName("u")
	p := topic.Partition(0)
	leader := p.Leader
	if leader != p.Replicas[0] {
		t.Fatalf("leader %d is not the first replica of %v", leader, p.Replicas)
	}
	// The followers fall behind: the leader shrinks the ISR to itself.
	resp := h.do(alterPartition(leader, epochs[leader], topic, 0, p.LeaderEpoch, p.PartitionEpoch, map[int32]int64{leader: epochs[leader]})).(*kmsg.AlterPartitionResponse)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("shrink: error %d", code)
	}
	if isr := h.image().Topics().TopicByName("u").Partition(0).Isr; !slices.Equal(isr, []int32{leader}) {
		t.Fatalf("isr %v after the shrink", isr)
	}
	return &uncleanRig{h: h, epochs: epochs, topic: topic, replicas: slices.Clone(p.Replicas)}
}

// fence lets the given brokers' sessions expire while the others heartbeat.
func (r *uncleanRig) fence(t *testing.T, ids ...int32) {
	t.Helper()
	for range 5 {
		r.h.tick(2 * time.Second)
		r.h.keepAlive(r.epochs, ids...)
	}
	for range ids {
		r.h.tick(r.h.ctl.tickEvery) // one broker per check
	}
	poll.Until(t, 10*time.Second, "brokers fenced", func() bool {
		for _, id := range ids {
			if !r.h.image().Cluster().Broker(id).Fenced {
				return false
			}
		}
		return true
	})
}

func (r *uncleanRig) partition() *image.PartitionRegistration {
	return r.h.image().Topics().TopicByName("u").Partition(0)
}

// wantLeaderless checks that the partition kept no leader and its last
// ISR member, and that no unclean election happened.
func (r *uncleanRig) wantLeaderless(t *testing.T) {
	t.Helper()
	p := r.partition()
	if p.Leader != record.NoLeader || !slices.Equal(p.Isr, r.replicas[:1]) {
		t.Fatalf("leader %d isr %v, want no leader and the last ISR member %d", p.Leader, p.Isr, r.replicas[0])
	}
	if evs := r.h.eventsOf(EventUncleanLeaderElection); len(evs) != 0 {
		t.Fatalf("unclean elections %+v", evs)
	}
	if n := r.h.ctl.Metrics().UncleanLeaderElectionsPerSec; n != 0 {
		t.Fatalf("UncleanLeaderElectionsPerSec %d", n)
	}
}

// wantUncleanLeader checks that want, a replica outside the old ISR, leads
// alone in RECOVERING, and that the election was counted and told.
func (r *uncleanRig) wantUncleanLeader(t *testing.T, want int32) {
	t.Helper()
	poll.Until(t, 10*time.Second, "an unclean leader", func() bool { return r.partition().Leader == want })
	p := r.partition()
	if !slices.Equal(p.Isr, []int32{want}) || p.LeaderRecoveryState != record.LeaderRecovering {
		t.Fatalf("isr %v recovery state %d, want [%d] and RECOVERING", p.Isr, p.LeaderRecoveryState, want)
	}
	poll.Until(t, 10*time.Second, "the election counted", func() bool { return r.h.ctl.Metrics().UncleanLeaderElectionsPerSec == 1 })
	evs := r.h.eventsOf(EventUncleanLeaderElection)
	if len(evs) != 1 || evs[0].Topic != "u" || evs[0].Leader != want || !slices.Equal(evs[0].LastIsr, r.replicas[:1]) || !slices.Equal(evs[0].Isr, []int32{want}) {
		t.Fatalf("unclean election events %+v", evs)
	}
	if m := r.h.ctl.Metrics(); m.OfflinePartitionsCount != 0 {
		t.Fatalf("offline partitions %d after the election", m.OfflinePartitionsCount)
	}
}

func TestFencedIsrLeavesThePartitionLeaderlessWithUncleanElectionOff(t *testing.T) {
	r := newUncleanRig(t, Config{}, nil)
	r.fence(t, r.replicas[0])
	r.wantLeaderless(t)
	// The periodic task (every minute here), with the other replicas
	// alive, finds nothing it may do either.
	for range 10 {
		r.h.tick(8 * time.Second)
		r.h.keepAlive(r.epochs, r.replicas[0])
	}
	for _, id := range r.replicas[1:] {
		if r.h.image().Cluster().Broker(id).Fenced {
			t.Fatalf("live replica %d fenced", id)
		}
	}
	r.wantLeaderless(t)
}

func TestFencedIsrElectsALiveReplicaWhenTheClusterDefaultAllowsIt(t *testing.T) {
	r := newUncleanRig(t, Config{UncleanLeaderElection: true}, nil)
	r.fence(t, r.replicas[0])
	// The first live replica in replica order, at the fence itself.
	r.wantUncleanLeader(t, r.replicas[1])
}

func TestTopicConfigOverridesTheClusterDefault(t *testing.T) {
	on := newUncleanRig(t, Config{}, map[string]string{"unclean.leader.election.enable": "True"})
	on.fence(t, on.replicas[0])
	on.wantUncleanLeader(t, on.replicas[1])

	off := newUncleanRig(t, Config{UncleanLeaderElection: true}, map[string]string{"unclean.leader.election.enable": "false"})
	off.fence(t, off.replicas[0])
	off.wantLeaderless(t)
}

func TestTurningUncleanElectionOnElectsAtTheNextPeriodicCheck(t *testing.T) {
	r := newUncleanRig(t, Config{UncleanElectionInterval: 30 * time.Second}, nil)
	r.fence(t, r.replicas[0])
	r.wantLeaderless(t)
	// The cluster default changes (a dynamic config, as
	// kafka-configs --entity-default writes it); Kafka's controller acts on
	// it at its next electUnclean run, not at the change.
	v := "true"
	r.h.commitRecords([]record.Record{&record.ConfigRecord{ResourceType: record.ResourceBroker, ResourceName: "", Name: "unclean.leader.election.enable", Value: &v}})
	r.h.sync()
	if r.partition().HasLeader() {
		t.Fatal("elected at the config change, before the periodic check")
	}
	for range 4 {
		r.h.tick(8 * time.Second)
		r.h.keepAlive(r.epochs, r.replicas[0])
	}
	r.wantUncleanLeader(t, r.replicas[1])
}

func TestUnfencingAnOutOfIsrReplicaElectsItUnclean(t *testing.T) {
	r := newUncleanRig(t, Config{}, map[string]string{"unclean.leader.election.enable": "true"})
	// Every replica goes: the first fence elects the second replica
	// unclean, the next fences take the partition offline with it.
	r.fence(t, r.replicas...)
	p := r.partition()
	if p.HasLeader() {
		t.Fatalf("leader %d with every broker fenced", p.Leader)
	}
	last := p.Isr[0]
	// A replica outside the ISR comes back first: unfencing elects it.
	var back int32 = -1
	for _, id := range r.replicas {
		if id != last {
			back = id
			break
		}
	}
	if resp := r.h.heartbeatCaughtUp(back, r.epochs[back]); resp.IsFenced {
		t.Fatalf("broker %d still fenced: %+v", back, resp)
	}
	poll.Until(t, 10*time.Second, "the returned replica leads", func() bool { return r.partition().Leader == back })
	if p := r.partition(); !slices.Equal(p.Isr, []int32{back}) || p.LeaderRecoveryState != record.LeaderRecovering {
		t.Fatalf("isr %v state %d after the unfence", p.Isr, p.LeaderRecoveryState)
	}
	evs := r.h.eventsOf(EventUncleanLeaderElection)
	if len(evs) == 0 || evs[len(evs)-1].Leader != back || evs[len(evs)-1].Reason != fmt.Sprintf("broker %d unfenced", back) {
		t.Fatalf("unclean election events %+v", evs)
	}
}

func TestUncleanElectionIsKafkasPartitionChange(t *testing.T) {
	p := &image.PartitionRegistration{Replicas: []int32{1, 2, 3}, Isr: []int32{1}, Leader: 1, LeaderEpoch: 4, PartitionEpoch: 7}
	alive := func(id int32) bool { return id == 3 }
	v := versionsFor(record.MetadataVersion4_4IV2)
	change := func(p *image.PartitionRegistration, isr []int32, ok func(int32) bool, el election) (*record.PartitionChangeRecord, bool) {
		c, how := newChange(record.Uuid{1}, 0, p, isr, ok, el, v).build()
		return c, how.unclean()
	}
	if c, _ := change(p, nil, alive, electionOnline); c == nil || c.Leader != record.NoLeader || c.Isr != nil {
		t.Fatalf("online election: %+v, want no leader and the ISR kept", c)
	}
	c, unclean := change(p, nil, alive, electionUnclean)
	if !unclean || c.Leader != 3 || !slices.Equal(c.Isr, []int32{3}) || c.LeaderRecoveryState != record.LeaderRecovering {
		t.Fatalf("unclean election: %+v, %v", c, unclean)
	}
	// A live ISR member is always preferred, though replica 2 comes first.
	p.Isr = []int32{1, 3}
	if c, unclean := change(p, []int32{3}, func(id int32) bool { return id == 3 || id == 2 }, electionUnclean); unclean || c.Leader != 3 {
		t.Fatalf("clean election with unclean allowed: %+v, %v", c, unclean)
	}
	// Nobody alive: nothing to change but the ISR, which ELR-off keeps.
	if c, unclean := change(&image.PartitionRegistration{Replicas: []int32{1, 2}, Isr: []int32{1}, Leader: record.NoLeader}, nil,
		func(int32) bool { return false }, electionUnclean); c != nil || unclean {
		t.Fatalf("no live replica: %+v, %v", c, unclean)
	}
}

func TestCreateTopicRefusesBadValuesOfTheConfigsTheDataPlaneReads(t *testing.T) {
	h, _ := cluster(t, 3, Config{})
	for _, c := range []struct{ key, value, want string }{
		{"min.insync.replicas", "two", "Invalid value two for configuration min.insync.replicas: Not a number of type INT"},
		{"min.insync.replicas", "0", "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"},
		{"unclean.leader.election.enable", "yes", "Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true or false"},
	} {
		r := createTopic("bad", 1, 1)
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = c.key, kmsg.StringPtr(c.value)
		r.Topics[0].Configs = []kmsg.CreateTopicsRequestTopicConfig{cfg}
		rt := h.do(r).(*kmsg.CreateTopicsResponse).Topics[0]
		if rt.ErrorCode != kerr.InvalidConfig.Code || rt.ErrorMessage == nil || *rt.ErrorMessage != c.want {
			t.Errorf("%s=%s: error %d %v, want INVALID_CONFIG %q", c.key, c.value, rt.ErrorCode, rt.ErrorMessage, c.want)
		}
	}
	if h.image().Topics().TopicByName("bad") != nil {
		t.Error("a refused topic was created")
	}
}
