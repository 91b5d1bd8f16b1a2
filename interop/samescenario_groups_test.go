package interop

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupSettings are the group configs both systems take: a small
// __consumer_offsets of 3 partitions on all 3 brokers, so that killing any
// broker leaves every partition a replica to lead, and a short wait before
// an empty group's first rebalance.
var groupSettings = []string{
	"offsets.topic.num.partitions=3",
	"offsets.topic.replication.factor=3",
	"group.initial.rebalance.delay.ms=100",
}

const (
	groupTopic = "orders"
	groupID    = "billing"
	// groupTopicPartitions is the partition count of groupTopic.
	groupTopicPartitions = 3
	// groupOffsetsPartitions is offsets.topic.num.partitions above.
	groupOffsetsPartitions = 3
)

// groupSide is one system's side of the consumer group scenario.
type groupSide struct {
	cl      *kgo.Client // the producer and admin client
	adm     *kadm.Client
	members map[string]*groupMember
	// produced lists every value produced, in order.
	produced []string
	// c0 is the group's coordinator before the kill.
	c0 int32
}

// groupScenario is the consumer group scenario's state of each run.
type groupScenario struct {
	sides map[*run]*groupSide
}

func (g *groupScenario) side(r *run) *groupSide { return g.sides[r] }

func brokerSeeds(sys System) []string {
	var seeds []string
	for _, id := range sys.Brokers() {
		seeds = append(seeds, sys.Addr(id))
	}
	return seeds
}

// produce writes n keyed records, key k<i> and value <prefix>-<i>, so
// that both systems put the same records in the same partitions (kgo's
// default partitioner is Kafka's murmur2 of the key).
func (g *groupScenario) produce(ctx context.Context, r *run, prefix string, n int) error {
	s := g.side(r)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := fmt.Sprintf("%s-%03d", prefix, i)
		recs[i] = &kgo.Record{Topic: groupTopic, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v)}
		s.produced = append(s.produced, v)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.cl.ProduceSync(ctx, recs...).FirstErr()
}

// consumerGroupFailover: a topic of 3 partitions on 3 brokers gets keyed
// records; two kgo members join one group (holding back until it is
// stable, so that no partition moves with records read and not
// committed), split the partitions and read everything, committing after
// each poll; one leaves and the other takes every partition over and
// reads what comes next; then, once it has read and committed a third of
// a third batch, the broker that coordinates the group (FindCoordinator's
// answer, named C0) is killed, and it reads and commits the rest through
// the group's new coordinator, the new leader of the group's
// __consumer_offsets partition; at last it leaves too. C0 is started
// again and made the partition's leader again (a preferred election): it
// loads the group anew, and a new member reads only what came since.
// Then kafka-consumer-groups resets the empty group's offsets, deletes
// one and deletes the group.
//
// Compared at each step: the group's state, member count and assignment
// strategy, how many partitions each member holds and what each member id
// starts with (the client id, or a static member's instance id), as
// kafka-consumer-groups --describe --state and --members print them; each
// partition's committed offset, log end and lag as --describe prints them
// (both systems hold the same records at the same offsets); that every
// record produced was read, and none twice; the __consumer_offsets
// partition the group lives on (Kafka's hash of its id), that the
// coordinator leads it (C0 first, then the partition's new leader, then
// C0 again), and that no other partition of __consumer_offsets holds
// records; the static member's steps (staticMember); what
// kafka-consumer-groups --reset-offsets, --delete-offsets, --delete,
// --list and --describe print about the empty group and after its
// deletion. Not compared: how long a rebalance or the coordinator's move
// took, and how many commits failed meanwhile (timings that depend on
// when a poll or a heartbeat falls), nor which member got more partitions
// or which broker leads what (chance: member ids and replica placement).
func consumerGroupFailover(l *lockstep, g *groupScenario) {
	l.begin()
	l.wait("every broker unfenced", time.Minute, everyBrokerUnfenced)
	l.each(func(r *run) error {
		_, err := r.tool(l.ctx, MainTopics, "--create", "--topic", groupTopic, "--partitions", strconv.Itoa(groupTopicPartitions), "--replication-factor", "3")
		return err
	})
	l.each(func(r *run) error { return g.produce(l.ctx, r, "first", 60) })

	// Both members join; neither reads before the group is stable.
	l.each(func(r *run) error {
		s := g.side(r)
		for _, name := range []string{"A", "B"} {
			m, err := startGroupMember(brokerSeeds(r.sys), name)
			if err != nil {
				return err
			}
			s.members[name] = m
		}
		return nil
	})
	stableWith := func(held []int) func(r *run) (bool, string) {
		return func(r *run) (bool, string) {
			state, h, err := groupView(r)
			return err == nil && state == "Stable" && slices.Equal(h, held), fmt.Sprintf("%s %v %v", state, h, err)
		}
	}
	l.wait("a stable group of two members splitting the partitions", time.Minute, stableWith([]int{1, 2}))
	for _, r := range l.runs {
		c, err := findCoordinator(r)
		if err != nil {
			l.t.Fatalf("%s: %v", r.sys.Name(), err)
		}
		g.side(r).c0 = c
		r.labels[c] = "C0"
	}
	l.observe("two members joined", g.groupState, groupMembers, groupOffsets, g.coordinatorFacts)

	for _, r := range l.runs {
		for _, m := range g.side(r).members {
			m.allow(-1)
		}
	}
	l.wait("the first records read", time.Minute, g.readAll)
	l.wait("the commits at the log ends", time.Minute, func(r *run) (bool, string) { return committedAtEnds(l.ctx, r, g.side(r)) })
	l.observe("first records read", g.groupState, groupOffsets, g.readOnce)

	left := l.each(func(r *run) error { g.side(r).members["B"].leave(); return nil })
	took := l.wait("A alone holding every partition", time.Minute, stableWith([]int{groupTopicPartitions}))
	for i, r := range l.runs {
		r.note("B left", "leave to A holding every partition", fmt.Sprintf("%.1fs", took[i].Sub(left[i]).Seconds()))
	}
	l.observe("B left", g.groupState, groupMembers)
	l.each(func(r *run) error { return g.produce(l.ctx, r, "second", 30) })
	l.wait("the second records read", time.Minute, g.readAll)
	l.wait("the commits at the log ends", time.Minute, func(r *run) (bool, string) { return committedAtEnds(l.ctx, r, g.side(r)) })
	l.observe("A read the second records", g.groupState, groupOffsets, g.readOnce)

	// A third batch; A reads a third of it and commits, then C0 is
	// killed. A reads nothing more until it is back in a session with the
	// new coordinator: kgo ends its session when a heartbeat cannot reach
	// the dead coordinator (see startGroupMember) and drops what it read
	// and could not commit, so records read during the move would be read
	// again whenever no commit happened to be in flight (at least once, by
	// design), on either system.
	for _, r := range l.runs {
		g.side(r).members["A"].allow(0)
	}
	l.wait("A holding back", 10*time.Second, func(r *run) (bool, string) {
		return g.side(r).members["A"].held(), "still polling"
	})
	l.each(func(r *run) error { return g.produce(l.ctx, r, "third", 60) })
	base := make(map[*run]int)
	for _, r := range l.runs {
		a := g.side(r).members["A"]
		base[r] = a.read()
		a.allow(20)
	}
	l.wait("A reading a third of the third records and committing them", time.Minute, func(r *run) (bool, string) {
		a := g.side(r).members["A"]
		return a.read() >= base[r]+20 && a.held() && a.cl.UncommittedOffsets() == nil, fmt.Sprintf("%d read, uncommitted %v", a.read(), a.cl.UncommittedOffsets())
	})
	gen0 := make(map[*run]int32)
	for _, r := range l.runs {
		_, gen0[r] = g.side(r).members["A"].cl.GroupMetadata()
	}
	killed := l.each(func(r *run) error { return r.sys.Kill(l.ctx, g.side(r).c0) })
	moved := l.wait("a new coordinator", time.Minute, func(r *run) (bool, string) {
		c, err := findCoordinator(r)
		return err == nil && c != g.side(r).c0, fmt.Sprintf("coordinator %d, %v", c, err)
	})
	for _, r := range l.runs {
		c, _ := findCoordinator(r)
		r.labels[c] = "C1"
	}
	rejoined := l.wait("A in a new session, the group stable", time.Minute, func(r *run) (bool, string) {
		_, gen := g.side(r).members["A"].cl.GroupMetadata()
		ok, s := stableWith([]int{groupTopicPartitions})(r)
		return ok && gen > gen0[r], fmt.Sprintf("A's generation %d (%d before the kill), group %s", gen, gen0[r], s)
	})
	for _, r := range l.runs {
		g.side(r).members["A"].allow(-1)
	}
	l.wait("the third records read", time.Minute, g.readAll)
	done := l.wait("the commits at the log ends", time.Minute, func(r *run) (bool, string) { return committedAtEnds(l.ctx, r, g.side(r)) })
	for i, r := range l.runs {
		r.note("C0 killed", "kill to a new coordinator", fmt.Sprintf("%.1fs", moved[i].Sub(killed[i]).Seconds()))
		r.note("C0 killed", "kill to A in a new session", fmt.Sprintf("%.1fs", rejoined[i].Sub(killed[i]).Seconds()))
		r.note("C0 killed", "kill to every offset committed", fmt.Sprintf("%.1fs", done[i].Sub(killed[i]).Seconds()))
	}
	l.wait("the group stable again", time.Minute, stableWith([]int{groupTopicPartitions}))
	l.observe("C0 killed", g.groupState, groupMembers, groupOffsets, g.coordinatorFacts, g.readOnce)

	l.each(func(r *run) error { g.side(r).members["A"].leave(); return nil })
	l.wait("the group empty", time.Minute, func(r *run) (bool, string) {
		state, h, err := groupView(r)
		return err == nil && state == "Empty", fmt.Sprintf("%s %v %v", state, h, err)
	})
	l.observe("A left", g.groupState, groupMembers, groupOffsets, g.readOnce)

	// C0 comes back and, once in the ISR of the group's partition, is
	// made its leader again (it was its first replica, the preferred
	// leader): it loads the group afresh, and a new member C goes on
	// from the committed offsets.
	want := groupPartitionFor(groupID, groupOffsetsPartitions)
	l.each(func(r *run) error { return r.sys.Start(l.ctx, g.side(r).c0) })
	l.wait("C0 back in the ISR of the group's partition", time.Minute, func(r *run) (bool, string) {
		pd, err := offsetsPartition(l.ctx, g.side(r), want)
		return err == nil && slices.Contains(pd.ISR, g.side(r).c0), fmt.Sprintf("%+v %v", pd, err)
	})
	for _, r := range l.runs {
		pd, _ := offsetsPartition(l.ctx, g.side(r), want)
		if len(pd.Replicas) == 0 || pd.Replicas[0] != g.side(r).c0 {
			l.t.Fatalf("%s: C0 %d is not the first replica of __consumer_offsets-%d: %+v", r.sys.Name(), g.side(r).c0, want, pd)
		}
	}
	l.each(func(r *run) error {
		_, err := r.tool(l.ctx, MainLeaderElection, "--election-type", "PREFERRED", "--topic", "__consumer_offsets", "--partition", strconv.Itoa(int(want)))
		return err
	})
	l.wait("C0 coordinating again", time.Minute, func(r *run) (bool, string) {
		c, err := findCoordinator(r)
		return err == nil && c == g.side(r).c0, fmt.Sprintf("coordinator %d, %v", c, err)
	})
	l.observe("C0 leads the group's partition again", g.groupState, groupOffsets, g.coordinatorFacts)
	l.each(func(r *run) error {
		m, err := startGroupMember(brokerSeeds(r.sys), "C")
		if err != nil {
			return err
		}
		g.side(r).members["C"] = m
		m.allow(-1)
		return nil
	})
	l.wait("C alone holding every partition", time.Minute, stableWith([]int{groupTopicPartitions}))
	l.each(func(r *run) error { return g.produce(l.ctx, r, "fourth", 30) })
	l.wait("the fourth records read", time.Minute, g.readAll)
	l.wait("the commits at the log ends", time.Minute, func(r *run) (bool, string) { return committedAtEnds(l.ctx, r, g.side(r)) })
	l.observe("C read the fourth records", g.groupState, groupMembers, groupOffsets, g.readOnce)
	l.each(func(r *run) error { g.side(r).members["C"].leave(); return nil })
	l.wait("the group empty", time.Minute, func(r *run) (bool, string) {
		state, h, err := groupView(r)
		return err == nil && state == "Empty", fmt.Sprintf("%s %v %v", state, h, err)
	})
	staticMember(l, g)

	// What kafka-consumer-groups does to an empty group.
	l.observe("offsets reset to the earliest",
		groupToolLines("--reset-offsets", mainConsumerGroups, "--reset-offsets", "--group", groupID, "--topic", groupTopic, "--to-earliest", "--execute"),
		groupOffsets)
	l.observe("partition 0's offset deleted",
		groupToolLines("--delete-offsets", mainConsumerGroups, "--delete-offsets", "--group", groupID, "--topic", groupTopic+":0"),
		groupOffsets)
	l.observe("group deleted",
		groupToolLines("--delete", mainConsumerGroups, "--delete", "--group", groupID),
		groupToolLines("--list", mainConsumerGroups, "--list"),
		groupToolLines("--describe", mainConsumerGroups, "--describe", "--group", groupID))
}

// staticInstance is the static member's group.instance.id.
const staticInstance = "s1"

// staticMember: a static member S (kgo with an instance id) joins the
// empty group and reads what comes; closed, it does not leave (kgo sends
// no LeaveGroup for a static member), so the group keeps it, Stable; S
// started again under the same instance id takes its place and reads only
// what came since; at last an admin's LeaveGroup names its instance id
// (AdminClient.removeMembersFromConsumerGroup) and the group is empty.
// Compared besides the group's view: how far the generation moved when S
// came back (kgo's own rejoin as a static leader may rebalance: the same
// client on both), and LeaveGroup's error codes.
func staticMember(l *lockstep, g *groupScenario) {
	start := func(name string) {
		l.each(func(r *run) error {
			m, err := startGroupMember(brokerSeeds(r.sys), name, kgo.InstanceID(staticInstance))
			if err != nil {
				return err
			}
			g.side(r).members[name] = m
			m.allow(-1)
			return nil
		})
	}
	readBatch := func(prefix string, n int) {
		l.each(func(r *run) error { return g.produce(l.ctx, r, prefix, n) })
		l.wait("the "+prefix+" records read", time.Minute, g.readAll)
		l.wait("the commits at the log ends", time.Minute, func(r *run) (bool, string) { return committedAtEnds(l.ctx, r, g.side(r)) })
	}
	start("S")
	l.wait("S alone holding every partition", time.Minute, func(r *run) (bool, string) {
		state, h, err := groupView(r)
		return err == nil && state == "Stable" && slices.Equal(h, []int{groupTopicPartitions}), fmt.Sprintf("%s %v %v", state, h, err)
	})
	readBatch("fifth", 30)
	gen := map[*run]int32{}
	for _, r := range l.runs {
		_, gen[r] = g.side(r).members["S"].cl.GroupMetadata()
	}
	l.observe("static member S read the fifth records", g.groupState, groupMembers, groupOffsets, g.readOnce)

	l.each(func(r *run) error { g.side(r).members["S"].leave(); return nil })
	l.observe("S closed", g.groupState, groupMembers, groupOffsets)

	start("S2")
	l.wait("S2 in the group", time.Minute, func(r *run) (bool, string) {
		id, gn := g.side(r).members["S2"].cl.GroupMetadata()
		state, h, err := groupView(r)
		return id != "" && gn > 0 && err == nil && state == "Stable" && slices.Equal(h, []int{groupTopicPartitions}), fmt.Sprintf("member %q generation %d, group %s %v %v", id, gn, state, h, err)
	})
	readBatch("sixth", 20)
	moved := func(_ context.Context, r *run) ([]fact, error) {
		_, gn := g.side(r).members["S2"].cl.GroupMetadata()
		return []fact{{key: "generation after S came back", value: fmt.Sprintf("%+d", gn-gen[r])}}, nil
	}
	l.observe("S started again", g.groupState, groupMembers, groupOffsets, g.readOnce, moved)

	l.each(func(r *run) error { g.side(r).members["S2"].leave(); return nil })
	var left sync.Map
	l.each(func(r *run) error {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group = 5, groupID
		m := kmsg.NewLeaveGroupRequestMember()
		m.InstanceID = kmsg.StringPtr(staticInstance)
		req.Members = []kmsg.LeaveGroupRequestMember{m}
		resp, err := askCoordinator(r, req)
		if err != nil {
			return err
		}
		left.Store(r, resp.(*kmsg.LeaveGroupResponse))
		return nil
	})
	l.wait("the group empty", time.Minute, func(r *run) (bool, string) {
		state, h, err := groupView(r)
		return err == nil && state == "Empty", fmt.Sprintf("%s %v %v", state, h, err)
	})
	leaveCodes := func(_ context.Context, r *run) ([]fact, error) {
		v, _ := left.Load(r)
		resp := v.(*kmsg.LeaveGroupResponse)
		var codes []string
		for _, m := range resp.Members {
			codes = append(codes, fmt.Sprintf("%s: %d", *m.InstanceID, m.ErrorCode))
		}
		return []fact{
			{key: "LeaveGroup error code", value: strconv.Itoa(int(resp.ErrorCode))},
			{key: "LeaveGroup members", value: strings.Join(codes, ", ")},
		}, nil
	}
	l.observe("S removed by its instance id", leaveCodes, g.groupState, groupMembers, groupOffsets)
}

// TestSameConsumerGroupScenarioOnKafkaAndKraftlab runs the consumer group
// scenario (consumerGroupFailover says what it does and which facts it
// compares) on a kraftlab playground and on a real Kafka 4.4 cluster of
// the same shape: one controller, brokers 101-103, the same broker timings
// and group settings. It fails on any difference
// testdata/samescenario-known.tsv does not list.
func TestSameConsumerGroupScenarioOnKafkaAndKraftlab(t *testing.T) {
	k := needKafka(t)
	known := readKnownDifferences(t)
	ctx := context.Background()
	dir := t.TempDir()
	extra := append(slices.Clone(sameTimings), groupSettings...)

	var kc *KafkaCluster
	var kerr error
	started := make(chan struct{})
	go func() { // the JVMs start while the playground does
		defer close(started)
		kc, kerr = StartKafkaCluster(ctx, k, filepath.Join(dir, "kafka"), KafkaClusterShape{Controllers: 1, Brokers: 3, Extra: extra})
	}()
	p := startPlayground(t, KraftlabUpArgs(1, 3, extra)...)
	<-started
	if kerr != nil {
		t.Fatal(kerr)
	}
	kafkaSys := KafkaSystem{C: kc}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(p.LogFile); err == nil {
				var lines []string
				for _, l := range strings.Split(string(b), "\n") {
					if strings.Contains(l, "group") || strings.Contains(l, "coordinat") {
						lines = append(lines, l)
					}
				}
				t.Logf("kraftlab's group log:\n%s", indent(strings.Join(lines, "\n")))
			}
			for _, id := range append(kafkaSys.Controllers(), kafkaSys.Brokers()...) {
				t.Logf("kafka node %d's log:\n%s", id, indent(kc.Nodes[id].Log(30)))
			}
		}
		kc.Close()
	})
	runs := []*run{{sys: NewKraftlabSystem(p), k: k}, {sys: kafkaSys, k: k}}
	g := &groupScenario{sides: map[*run]*groupSide{}}
	for _, r := range runs {
		r.labels = map[int32]string{}
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokerSeeds(r.sys)...), kgo.ProducerLinger(0),
			kgo.MetadataMinAge(250*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
		if err != nil {
			t.Fatal(err)
		}
		s := &groupSide{cl: cl, adm: kadm.NewClient(cl), members: map[string]*groupMember{}}
		g.sides[r] = s
		t.Cleanup(func() {
			if t.Failed() {
				for _, name := range slices.Sorted(maps.Keys(s.members)) {
					t.Logf("%s: member %s's kgo log:\n%s", r.sys.Name(), name, indent(s.members[name].log.String()))
				}
			}
			for _, m := range s.members {
				select {
				case <-m.done:
				default:
					m.leave()
				}
			}
			cl.Close()
		})
	}
	l := &lockstep{t: t, ctx: ctx, scenario: "consumer group", runs: runs}
	defer func() {
		if t.Failed() {
			for _, r := range runs {
				t.Logf("%s's tools:\n%s", r.sys.Name(), strings.Join(r.toolLogs, ""))
			}
		}
	}()
	consumerGroupFailover(l, g)
	l.compare(known)
}

// everyBrokerUnfenced asks each broker for DescribeCluster: every one must
// list all brokers unfenced. What each said is kept, so that a timeout
// tells a broker whose metadata is stuck from a cluster that is slow.
func everyBrokerUnfenced(r *run) (bool, string) {
	all := true
	var saw []string
	for _, id := range r.sys.Brokers() {
		f, err := BrokerFencingAt(r.sys.Addr(id))
		if err != nil {
			all = false
			saw = append(saw, fmt.Sprintf("broker %d: %v", id, err))
			continue
		}
		n := 0
		for _, fenced := range f {
			if !fenced {
				n++
			}
		}
		all = all && n == len(r.sys.Brokers())
		saw = append(saw, fmt.Sprintf("broker %d says fenced %v", id, f))
	}
	return all, strings.Join(saw, "; ")
}
