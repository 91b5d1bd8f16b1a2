package interop

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
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

// groupPartitionFor is the __consumer_offsets partition Kafka keeps a
// group on: the absolute value of the group id's Java String.hashCode
// modulo the partition count (GroupCoordinatorService.partitionFor, where
// Utils.abs maps Integer.MIN_VALUE to 0).
func groupPartitionFor(group string, partitions int32) int32 {
	var h int32
	for _, u := range utf16Units(group) {
		h = 31*h + int32(u)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}

// utf16Units is s as Java's String holds it.
func utf16Units(s string) []uint16 {
	var out []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xd800+(r>>10)), uint16(0xdc00+(r&0x3ff)))
			continue
		}
		out = append(out, uint16(r))
	}
	return out
}

// groupMember is one kgo group consumer of groupTopic in groupID. A
// goroutine polls it and commits by hand after every poll; it reads no
// more than its budget allows, so that a step can hold it back (the
// members join before reading, so that no partition moves with records
// read and not committed) or let it read part of what is there.
type groupMember struct {
	name string
	cl   *kgo.Client
	// log is what kgo logged, at info level, printed when the test fails.
	log *lockedBuffer

	mu     sync.Mutex
	got    map[string]int
	budget int // records it may still read; -1 without a limit
	// commitErrs counts failed commits (while the coordinator moves).
	commitErrs int
	// idle is set while the loop waits for a budget.
	idle   bool
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func startGroupMember(seeds []string, name string, opts ...kgo.Opt) (*groupMember, error) {
	log := &lockedBuffer{}
	opts = append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID(name),
		kgo.WithLogger(kgo.BasicLogger(log, kgo.LogLevelInfo, func() string { return time.Now().Format("15:04:05.000 ") })),
		kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(groupTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.MetadataMinAge(250 * time.Millisecond), kgo.FetchMaxWait(250 * time.Millisecond),
		// A heartbeat every 500 ms, retried little: a member's session
		// ends within a second of its coordinator's kill, long before a
		// new one serves the group, so that it rejoins on both systems.
		kgo.HeartbeatInterval(500 * time.Millisecond), kgo.RequestRetries(3),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond })}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupMember{name: name, cl: cl, log: log, got: map[string]int{}, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go m.loop(ctx)
	return m, nil
}

func (m *groupMember) loop(ctx context.Context) {
	defer close(m.done)
	for ctx.Err() == nil {
		m.mu.Lock()
		n := m.budget
		m.idle = n == 0
		m.mu.Unlock()
		if n == 0 {
			select {
			case <-m.wake:
			case <-ctx.Done():
			}
			continue
		}
		if n < 0 {
			n = 1000
		}
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := m.cl.PollRecords(pctx, n)
		cancel()
		m.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			m.got[string(r.Value)]++
			if m.budget > 0 {
				m.budget--
			}
		})
		m.mu.Unlock()
		if m.cl.UncommittedOffsets() != nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := m.cl.CommitUncommittedOffsets(cctx); err != nil {
				m.mu.Lock()
				m.commitErrs++
				m.mu.Unlock()
			}
			cancel()
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// allow lets the member read n more records (-1: all there are).
func (m *groupMember) allow(n int) {
	m.mu.Lock()
	m.budget = n
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// held reports whether the member waits for a budget: it reads nothing
// until allowed to.
func (m *groupMember) held() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.idle
}

// leave stops the polling and closes the client, which leaves the group
// (everything read was committed after its poll).
func (m *groupMember) leave() {
	m.cancel()
	<-m.done
	m.cl.Close()
}

// read is how many distinct values the member read.
func (m *groupMember) read() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.got)
}

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

// findCoordinator asks a running broker which broker coordinates groupID.
func findCoordinator(r *run) (int32, error) {
	_, addr, err := runningBroker(r.sys)
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKeys = 4, []string{groupID}
	resp, err := Request(addr, req)
	if err != nil {
		return 0, err
	}
	cs := resp.(*kmsg.FindCoordinatorResponse).Coordinators
	if len(cs) != 1 || cs[0].ErrorCode != 0 {
		return 0, fmt.Errorf("FindCoordinator %s: %+v", groupID, cs)
	}
	return cs[0].NodeID, nil
}

// offsetsPartition is __consumer_offsets partition p in the metadata.
func offsetsPartition(ctx context.Context, s *groupSide, p int32) (kadm.PartitionDetail, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	td, err := s.adm.ListTopicsWithInternal(ctx, "__consumer_offsets")
	if err != nil {
		return kadm.PartitionDetail{}, err
	}
	d, ok := td["__consumer_offsets"]
	if !ok || d.Err != nil {
		return kadm.PartitionDetail{}, fmt.Errorf("no __consumer_offsets in the metadata: %v", d.Err)
	}
	pd, ok := d.Partitions[p]
	if !ok {
		return kadm.PartitionDetail{}, fmt.Errorf("no __consumer_offsets-%d in the metadata", p)
	}
	return pd, nil
}

// askCoordinator sends req to the broker FindCoordinator names now: kgo
// keeps a group's coordinator until it answers NOT_COORDINATOR, and a
// killed one answers nothing.
func askCoordinator(r *run, req kmsg.Request) (kmsg.Response, error) {
	c, err := findCoordinator(r)
	if err != nil {
		return nil, err
	}
	return Request(r.sys.Addr(c), req)
}

// groupView is the group as DescribeGroups at its coordinator shows it:
// its state and how many partitions each member holds, sorted.
func groupView(r *run) (state string, held []int, err error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version, req.Groups = 5, []string{groupID}
	resp, err := askCoordinator(r, req)
	if err != nil {
		return "", nil, err
	}
	gs := resp.(*kmsg.DescribeGroupsResponse).Groups
	if len(gs) != 1 || gs[0].ErrorCode != 0 {
		return "", nil, fmt.Errorf("DescribeGroups %s: %+v", groupID, gs)
	}
	for _, m := range gs[0].Members {
		n := 0
		var ca kmsg.ConsumerMemberAssignment
		if len(m.MemberAssignment) > 0 && ca.ReadFrom(m.MemberAssignment) == nil {
			for _, t := range ca.Topics {
				n += len(t.Partitions)
			}
		}
		held = append(held, n)
	}
	slices.Sort(held)
	return gs[0].State, held, nil
}

// committedAtEnds reports whether every partition of groupTopic has the
// group's committed offset (OffsetFetch at its coordinator) at its log
// end.
func committedAtEnds(ctx context.Context, r *run, s *groupSide) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ends, err := s.adm.ListEndOffsets(ctx, groupTopic)
	if err != nil {
		return false, err.Error()
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 7, groupID
	resp, err := askCoordinator(r, req)
	if err != nil {
		return false, err.Error()
	}
	fr := resp.(*kmsg.OffsetFetchResponse)
	committed := map[int32]int64{}
	for _, t := range fr.Topics {
		for _, p := range t.Partitions {
			if t.Topic == groupTopic && p.ErrorCode == 0 {
				committed[p.Partition] = p.Offset
			}
		}
	}
	var b strings.Builder
	ok := fr.ErrorCode == 0
	for p := range int32(groupTopicPartitions) {
		e, _ := ends.Lookup(groupTopic, p)
		c, found := committed[p]
		fmt.Fprintf(&b, "p%d committed %d end %d; ", p, c, e.Offset)
		if !found || e.Err != nil || c != e.Offset {
			ok = false
		}
	}
	return ok, fmt.Sprintf("error code %d, %s", fr.ErrorCode, b.String())
}

// readAll reports whether the members read every value produced (each
// at least once).
func (g *groupScenario) readAll(r *run) (bool, string) {
	s := g.side(r)
	seen := 0
	for _, v := range s.produced {
		for _, m := range s.members {
			m.mu.Lock()
			n := m.got[v]
			m.mu.Unlock()
			if n > 0 {
				seen++
				break
			}
		}
	}
	return seen == len(s.produced), fmt.Sprintf("%d of %d values read", seen, len(s.produced))
}

// readOnce is the members' record count: how many produced values were
// read more than once, or not at all, in all.
func (g *groupScenario) readOnce(_ context.Context, r *run) ([]fact, error) {
	s := g.side(r)
	twice, missed := 0, 0
	var commitErrs []string
	for _, v := range s.produced {
		n := 0
		for _, m := range s.members {
			m.mu.Lock()
			n += m.got[v]
			m.mu.Unlock()
		}
		switch {
		case n == 0:
			missed++
		case n > 1:
			twice++
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.members)) {
		m := s.members[name]
		m.mu.Lock()
		commitErrs = append(commitErrs, fmt.Sprintf("%s %d", name, m.commitErrs))
		m.mu.Unlock()
	}
	return []fact{
		{key: "records produced", value: strconv.Itoa(len(s.produced))},
		{key: "records read more than once", value: strconv.Itoa(twice)},
		{key: "records not read", value: strconv.Itoa(missed)},
		{key: "failed commits", value: strings.Join(commitErrs, ", "), notCompared: "timing: a commit fails while the coordinator moves"},
	}, nil
}

// groupState is `kafka-consumer-groups --describe --state`: the group's
// state, member count and assignment strategy, and whether the
// coordinator it names leads the group's __consumer_offsets partition
// now. Which broker that is (C0 the coordinator before the kill, C1 the
// next) is compared where coordinatorFacts reads it, right after the
// moves; in between, a broker of a loaded 2-core machine that misses
// heartbeats for broker.session.timeout.ms is fenced and its partitions
// move, on either system, so it is printed here, not compared.
func (g *groupScenario) groupState(ctx context.Context, r *run) ([]fact, error) {
	out, err := r.tool(ctx, mainConsumerGroups, "--describe", "--group", groupID, "--state")
	if err != nil {
		return nil, err
	}
	// GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS; a
	// strategy printed blank reads as none.
	var f []string
	for _, line := range strings.Split(out, "\n") {
		if fs := strings.Fields(line); len(fs) >= 5 && fs[0] == groupID {
			f = fs
		}
	}
	if f == nil {
		return nil, fmt.Errorf("kafka-consumer-groups --describe --state: no row of %s in %q", groupID, out)
	}
	id, err := strconv.ParseInt(strings.Trim(f[2], "()"), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("kafka-consumer-groups --describe --state: coordinator %q", f[2])
	}
	pd, err := offsetsPartition(ctx, g.side(r), groupPartitionFor(groupID, groupOffsetsPartitions))
	if err != nil {
		return nil, err
	}
	leads := "yes"
	if pd.Leader != int32(id) {
		leads = fmt.Sprintf("no: it names %s, the partition's leader is %s", r.label(int32(id)), r.label(pd.Leader))
	}
	strategy := "none"
	if len(f) == 6 {
		strategy = f[3]
	}
	return []fact{
		{key: "state", value: f[len(f)-2]},
		{key: "#members", value: f[len(f)-1]},
		{key: "assignment strategy", value: strategy},
		{key: "coordinator (--state) leads the group's partition", value: leads},
		{key: "coordinator (--state)", value: r.label(int32(id)), notCompared: "a broker fenced under load moves its partitions"},
	}, nil
}

// memberUUID is the random UUID a member id ends with.
var memberUUID = regexp.MustCompile(`-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// groupMembers is `kafka-consumer-groups --describe --members`: how many
// partitions each member holds, sorted (which member gets more is
// chance: members ids are random), and what each member id starts with
// before its UUID (the client id, or a static member's instance id),
// sorted.
func groupMembers(ctx context.Context, r *run) ([]fact, error) {
	out, err := r.tool(ctx, mainConsumerGroups, "--describe", "--group", groupID, "--members")
	if err != nil {
		return nil, err
	}
	var held []int
	var prefixes []string
	for _, line := range strings.Split(out, "\n") {
		// GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS:
		// a static member's row has its instance id.
		fs := strings.Fields(line)
		if len(fs) < 5 || fs[0] != groupID {
			continue
		}
		n, err := strconv.Atoi(fs[len(fs)-1])
		if err != nil {
			return nil, fmt.Errorf("kafka-consumer-groups --members: %q", line)
		}
		held = append(held, n)
		prefixes = append(prefixes, memberUUID.ReplaceAllString(fs[1], "-<uuid>"))
	}
	slices.Sort(held)
	slices.Sort(prefixes)
	v := "none"
	if len(held) > 0 {
		v = strings.Trim(fmt.Sprint(held), "[]")
	}
	return []fact{
		{key: "partitions per member", value: v},
		{key: "member ids", value: cmp.Or(strings.Join(prefixes, " "), "none")},
	}, nil
}

// groupOffsets is `kafka-consumer-groups --describe` (its offsets): each
// partition's committed offset, log end and lag as printed, and whether a
// member holds it. The records are the same on both (same keys, same
// partitioner, one producer), so the offsets are compared as they are.
func groupOffsets(ctx context.Context, r *run) ([]fact, error) {
	out, err := r.tool(ctx, mainConsumerGroups, "--describe", "--group", groupID)
	if err != nil {
		return nil, err
	}
	var facts []fact
	for _, line := range strings.Split(out, "\n") {
		// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
		// CONSUMER-ID HOST CLIENT-ID
		fs := strings.Fields(line)
		if len(fs) != 9 || fs[0] != groupID || fs[1] != groupTopic {
			continue
		}
		held := "held by a member"
		if fs[6] == "-" {
			held = "no member"
		}
		facts = append(facts, fact{key: "partition " + fs[2], value: fmt.Sprintf("committed %s, log end %s, lag %s, %s", fs[3], fs[4], fs[5], held)})
	}
	if len(facts) == 0 {
		return nil, fmt.Errorf("kafka-consumer-groups --describe: no partition rows of %s in %q", groupTopic, out)
	}
	for p := range groupTopicPartitions { // an empty group lists only the partitions it has offsets of
		if key := "partition " + strconv.Itoa(p); !slices.ContainsFunc(facts, func(f fact) bool { return f.key == key }) {
			facts = append(facts, fact{key: key, value: "no row"})
		}
	}
	slices.SortFunc(facts, func(a, b fact) int { return strings.Compare(a.key, b.key) })
	return facts, nil
}

// coordinatorFacts says which __consumer_offsets partition the group
// lives on: Kafka's hash of its id, whether the coordinator FindCoordinator
// names leads that partition, which partitions of __consumer_offsets hold
// records (only this group commits: its partition alone should), and
// whether the coordinator is still C0.
func (g *groupScenario) coordinatorFacts(ctx context.Context, r *run) ([]fact, error) {
	s := g.side(r)
	want := groupPartitionFor(groupID, groupOffsetsPartitions)
	c, err := findCoordinator(r)
	if err != nil {
		return nil, err
	}
	pd, err := offsetsPartition(ctx, s, want)
	if err != nil {
		return nil, err
	}
	leader := pd.Leader
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ends, err := s.adm.ListEndOffsets(lctx, "__consumer_offsets")
	if err != nil {
		return nil, err
	}
	var written []string
	for p := range int32(groupOffsetsPartitions) {
		e, ok := ends.Lookup("__consumer_offsets", p)
		if !ok || e.Err != nil {
			return nil, fmt.Errorf("ListOffsets __consumer_offsets-%d: %v", p, e.Err)
		}
		if e.Offset > 0 {
			written = append(written, strconv.Itoa(int(p)))
		}
	}
	leads := "yes"
	if c != leader {
		leads = fmt.Sprintf("no: it is %s, the partition's leader %s", r.label(c), r.label(leader))
	}
	return []fact{
		{key: "group's __consumer_offsets partition (hash of its id)", value: strconv.Itoa(int(want))},
		{key: "coordinator leads that partition", value: leads},
		{key: "__consumer_offsets partitions with records", value: strings.Join(written, ",")},
		{key: "coordinator", value: r.label(c)},
	}, nil
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
	l.wait("every broker unfenced", time.Minute, func(r *run) (bool, string) {
		f, err := BrokerFencing(r.sys)
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, fenced := range f {
			if !fenced {
				n++
			}
		}
		return n == len(r.sys.Brokers()), fmt.Sprint(f)
	})
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

// groupToolLines runs a Kafka tool once (no retry: it may change the group)
// against a running broker and returns whether it failed and each line it
// printed, blanks left out and spaces squeezed (the columns' padding
// follows the values' widths), with the error lines of its stderr.
func groupToolLines(name, main string, args ...string) observer {
	return func(ctx context.Context, r *run) ([]fact, error) {
		_, boot, err := runningBroker(r.sys)
		if err != nil {
			return nil, err
		}
		res := r.k.Run(ctx, 90*time.Second, main, append([]string{"--bootstrap-server", boot}, args...)...)
		r.logTool(res)
		status := "succeeded"
		if res.Err != nil {
			status = "failed"
		}
		facts := []fact{{key: name + ": exit", value: status}}
		var lines []string
		for _, l := range strings.Split(res.Stdout, "\n") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
		for _, l := range strings.Split(stripSLF4J(res.Stderr), "\n") {
			if strings.Contains(l, "Error") || strings.Contains(l, "Exception") {
				lines = append(lines, "stderr: "+strings.Join(strings.Fields(l), " "))
			}
		}
		n := 0
		for _, l := range lines {
			if l == "" {
				continue
			}
			n++
			facts = append(facts, fact{key: fmt.Sprintf("%s: line %d", name, n), value: l})
		}
		return facts, nil
	}
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
