package interop

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// groupPartitionFor follows Java: "polygenelubricants".hashCode() is
// Integer.MIN_VALUE, which Kafka's Utils.abs makes 0; a character past
// U+FFFF counts as two UTF-16 units.
func TestGroupPartitionForHashesAsJava(t *testing.T) {
	for _, c := range []struct {
		group      string
		partitions int32
		want       int32
	}{
		{"polygenelubricants", 50, 0},
		{"a", 50, 97 % 50},
		{"ab", 50, (97*31 + 98) % 50},
		{"\U0001F600", 1000, (0xd83d*31 + 0xde00) % 1000},
	} {
		if got := groupPartitionFor(c.group, c.partitions); got != c.want {
			t.Errorf("groupPartitionFor(%q, %d) = %d, want %d", c.group, c.partitions, got, c.want)
		}
	}
}
