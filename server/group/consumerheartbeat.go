package group

import (
	"fmt"
	"hash/fnv"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The member epochs a heartbeat leaves with.
const (
	leaveEpoch       int32 = -1
	staticLeaveEpoch int32 = -2
)

// HeartbeatParams is one ConsumerGroupHeartbeat; the pointer and slice
// fields are nil when unchanged since the member's last heartbeat.
type HeartbeatParams struct {
	MemberID       string
	MemberEpoch    int32
	InstanceID     *string
	RackID         *string
	ClientID, Host string
	// RebalanceTimeoutMs is -1 when unchanged.
	RebalanceTimeoutMs int32
	Topics             []string
	Regex              *string
	ServerAssignor     *string
	Owned              []TopicPartitions
}

// HeartbeatResult answers a ConsumerGroupHeartbeat.
type HeartbeatResult struct {
	Code              int16
	Message           string
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	// Assignment is given when HasAssignment: to a member that joins or
	// sent its full state, or whose assigned partitions changed.
	Assignment    []TopicPartitions
	HasAssignment bool
}

func fail(code int16, format string, args ...any) HeartbeatResult {
	return HeartbeatResult{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Heartbeat handles a ConsumerGroupHeartbeat (Kafka's
// consumerGroupHeartbeat): it joins, updates or leaves the member,
// bumps the group epoch when a subscription or the subscribed topics
// changed, computes a new target assignment for a new epoch, and moves
// the member towards its target: partitions it must give up first (it
// stays at its epoch until its heartbeat no longer owns them), then
// partitions the other members have released, at the new epoch.
func (g *ConsumerGroup) Heartbeat(now time.Time, p HeartbeatParams, topics Topics) HeartbeatResult {
	if g.dead {
		return fail(kerr.NotCoordinator.Code, "group %s is unloaded", g.id)
	}
	if p.MemberEpoch == leaveEpoch || p.MemberEpoch == staticLeaveEpoch {
		return g.leave(p, topics)
	}
	m, res := g.memberFor(p)
	if res.Code != 0 {
		return res
	}
	before := maps.Clone(m.assigned)
	subChanged := m.sub.Topics == nil && m.sub.Regex == nil
	oldAssignor := g.preferredAssignor()
	if p.InstanceID != nil {
		m.sub.InstanceID = p.InstanceID
	}
	if p.RackID != nil {
		m.sub.RackID = p.RackID
	}
	if p.RebalanceTimeoutMs != -1 {
		m.sub.RebalanceTimeoutMs = p.RebalanceTimeoutMs
	}
	if p.ServerAssignor != nil {
		m.sub.ServerAssignor = p.ServerAssignor
	}
	if p.Topics != nil && !slices.Equal(sortedCopy(p.Topics), sortedCopy(m.sub.Topics)) {
		m.sub.Topics, subChanged = slices.Clone(p.Topics), true
	}
	if p.Regex != nil {
		re := p.Regex
		if *re == "" {
			re = nil
		}
		if !equalPtr(re, m.sub.Regex) {
			m.sub.Regex, subChanged = re, true
		}
	}
	m.sub.ClientID, m.sub.ClientHost = p.ClientID, p.Host
	if m.sub.Topics == nil {
		m.sub.Topics = []string{}
	}
	if g.hashUnknown {
		g.metaHash, g.hashUnknown = g.metadataHash(topics), false
	}
	if subChanged || g.preferredAssignor() != oldAssignor {
		g.epoch++
	} else if g.metadataHash(topics) != g.metaHash {
		// A subscribed topic was created, deleted or grew.
		g.epoch++
	}
	if g.epoch > g.assignmentEpoch {
		g.updateTarget(topics)
	}
	g.reconcile(now, m, p.Owned, topics)
	m.sessionDeadline = now.Add(g.timing.ConsumerSessionTimeout)
	res = HeartbeatResult{MemberID: m.id, MemberEpoch: m.epoch, HeartbeatInterval: g.timing.ConsumerHeartbeatInterval}
	full := p.RebalanceTimeoutMs != -1 && (p.Topics != nil || p.Regex != nil) && p.Owned != nil
	if p.MemberEpoch == 0 || full || !maps.Equal(before, m.assigned) {
		res.HasAssignment, res.Assignment = true, sortedTopicPartitions(m.assigned)
	}
	return res
}

// memberFor is the member a heartbeat (not a leave) is from: a new one
// for epoch 0, the static member it replaces, or the member it names,
// whose epoch it must have (Kafka's epoch validation: the previous epoch
// passes when the member owns no more than it is assigned, since the
// answer that bumped it may have been lost).
func (g *ConsumerGroup) memberFor(p HeartbeatParams) (*cmember, HeartbeatResult) {
	if p.InstanceID != nil {
		if id, ok := g.static[*p.InstanceID]; ok && id != p.MemberID {
			old := g.members[id]
			if p.MemberEpoch != 0 {
				return nil, fail(kerr.FencedInstanceID.Code, "instance %s is member %s, not %s", *p.InstanceID, id, p.MemberID)
			}
			if old.epoch != staticLeaveEpoch {
				return nil, fail(kerr.UnreleasedInstanceID.Code, "static member %s of instance %s has not left", id, *p.InstanceID)
			}
			// The instance is back with a new member id: the new member
			// takes over the old one's assignment.
			nm := *old
			nm.id, nm.epoch, nm.prevEpoch, nm.state, nm.revokeDeadline = p.MemberID, 0, 0, MemberStable, time.Time{}
			g.removeMember(id)
			g.members[nm.id] = &nm
			g.static[*p.InstanceID] = nm.id
			return &nm, HeartbeatResult{}
		}
	}
	m := g.members[p.MemberID]
	if m == nil {
		if p.MemberEpoch != 0 {
			return nil, fail(kerr.UnknownMemberID.Code, "member %s is not in group %s", p.MemberID, g.id)
		}
		m = &cmember{id: p.MemberID, assigned: partSet{}, revoking: partSet{}, target: partSet{}, since: map[idPartition]int32{}}
		m.sub.RebalanceTimeoutMs = -1
		g.members[m.id] = m
		if p.InstanceID != nil {
			g.static[*p.InstanceID] = m.id
		}
		return m, HeartbeatResult{}
	}
	switch e := p.MemberEpoch; {
	case e == 0:
	case e > m.epoch:
		return nil, fail(kerr.FencedMemberEpoch.Code, "member epoch %d is newer than the coordinator's %d: rejoin", e, m.epoch)
	case e < m.epoch:
		if e != m.prevEpoch || !subsetOf(p.Owned, m.assigned) {
			return nil, fail(kerr.FencedMemberEpoch.Code, "member epoch %d is older than the coordinator's %d: rejoin", e, m.epoch)
		}
	}
	return m, HeartbeatResult{}
}

// leave handles a heartbeat of epoch -1 (the member leaves: the group
// epoch is bumped) or -2 (a static member leaves for a while: it keeps
// its assignment for its instance until its session expires).
func (g *ConsumerGroup) leave(p HeartbeatParams, topics Topics) HeartbeatResult {
	id := p.MemberID
	if p.InstanceID != nil {
		sid, ok := g.static[*p.InstanceID]
		if !ok {
			return fail(kerr.UnknownMemberID.Code, "instance %s is not in group %s", *p.InstanceID, g.id)
		}
		if sid != id {
			return fail(kerr.FencedInstanceID.Code, "instance %s is member %s, not %s", *p.InstanceID, sid, id)
		}
	}
	m := g.members[id]
	if m == nil {
		return fail(kerr.UnknownMemberID.Code, "member %s is not in group %s", id, g.id)
	}
	if p.MemberEpoch == staticLeaveEpoch && m.sub.InstanceID != nil {
		m.prevEpoch, m.epoch, m.revokeDeadline = m.epoch, staticLeaveEpoch, time.Time{}
		return HeartbeatResult{MemberID: id, MemberEpoch: staticLeaveEpoch}
	}
	g.removeMember(id)
	g.epoch++
	g.updateTarget(topics)
	return HeartbeatResult{MemberID: id, MemberEpoch: leaveEpoch}
}

// subscribedTopics are the topics a member subscribes to that exist: by
// name and by its regular expression (internal topics never match).
func subscribedTopics(m *cmember, topics Topics) []TopicInfo {
	seen := map[string]bool{}
	var out []TopicInfo
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		if t, ok := topics.ByName(name); ok {
			out = append(out, t)
		}
	}
	for _, n := range m.sub.Topics {
		add(n)
	}
	if m.sub.Regex != nil {
		if re, err := compileRegex(*m.sub.Regex); err == nil {
			for _, n := range topics.Names() {
				if !strings.HasPrefix(n, "__") && re.MatchString(n) {
					add(n)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b TopicInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// compileRegex compiles a subscription's regular expression, which must
// match a whole topic name, as Java's Pattern.matches does.
func compileRegex(s string) (*regexp.Regexp, error) {
	return regexp.Compile("^(?:" + s + ")$")
}

// metadataHash fingerprints the topics the members subscribe to: their
// names, ids and partition counts.
func (g *ConsumerGroup) metadataHash(topics Topics) uint64 {
	all := map[string]TopicInfo{}
	for _, m := range g.members {
		for _, t := range subscribedTopics(m, topics) {
			all[t.Name] = t
		}
	}
	h := fnv.New64a()
	for _, n := range slices.Sorted(maps.Keys(all)) {
		t := all[n]
		b := kbin.AppendString(nil, n)
		b = append(b, t.ID[:]...)
		b = kbin.AppendInt32(b, t.Partitions)
		h.Write(b)
	}
	return h.Sum64()
}

// preferredAssignor is the server assignor the members asked for most
// (Kafka's ConsumerGroup.preferredServerAssignor), else the default.
func (g *ConsumerGroup) preferredAssignor() string {
	votes := map[string]int{}
	for _, m := range g.members {
		if m.sub.ServerAssignor != nil {
			votes[*m.sub.ServerAssignor]++
		}
	}
	best, n := DefaultAssignor, 0
	for _, name := range slices.Sorted(maps.Keys(votes)) {
		if votes[name] > n {
			best, n = name, votes[name]
		}
	}
	return best
}

// updateTarget computes the target assignment of the group epoch with
// the preferred assignor.
func (g *ConsumerGroup) updateTarget(topics Topics) {
	subs := map[string][]TopicInfo{}
	prev := map[string]partSet{}
	for id, m := range g.members {
		subs[id] = subscribedTopics(m, topics)
		prev[id] = m.target
	}
	targets := assignors[g.preferredAssignor()](subs, prev)
	for id, m := range g.members {
		m.target = targets[id]
		if m.target == nil {
			m.target = partSet{}
		}
	}
	g.assignmentEpoch, g.metaHash = g.epoch, g.metadataHash(topics)
}

// reconcile moves a member towards its target assignment (Kafka's
// CurrentAssignmentBuilder).
func (g *ConsumerGroup) reconcile(now time.Time, m *cmember, owned []TopicPartitions, topics Topics) {
	switch m.state {
	case MemberStable:
		if m.epoch == g.assignmentEpoch {
			return
		}
	case MemberUnrevokedPartitions:
		if ownsAny(owned, m.revoking) {
			return
		}
	}
	subscribed := map[[16]byte]bool{}
	for _, t := range subscribedTopics(m, topics) {
		subscribed[t.ID] = true
	}
	keep, revoke, add := partSet{}, partSet{}, partSet{}
	for tp := range m.assigned {
		if _, ok := m.target[tp]; ok && subscribed[tp.topic] {
			keep[tp] = struct{}{}
		} else {
			revoke[tp] = struct{}{}
		}
	}
	unreleased := false
	for tp := range m.target {
		if _, ok := keep[tp]; ok || !subscribed[tp.topic] {
			continue
		}
		if _, mine := m.revoking[tp]; !mine && g.owned(tp, m.id) {
			unreleased = true
			continue
		}
		add[tp] = struct{}{}
	}
	if len(revoke) > 0 && ownsAny(owned, revoke) {
		m.prevEpoch, m.state, m.assigned, m.revoking = m.epoch, MemberUnrevokedPartitions, keep, revoke
		timeout := time.Duration(max(m.sub.RebalanceTimeoutMs, 0)) * time.Millisecond
		m.revokeDeadline = now.Add(timeout)
		return
	}
	since := map[idPartition]int32{}
	for tp := range keep {
		if e, ok := m.since[tp]; ok {
			since[tp] = e
		} else {
			since[tp] = m.epoch
		}
	}
	for tp := range add {
		since[tp] = g.assignmentEpoch
	}
	maps.Copy(keep, add)
	m.since = since
	m.prevEpoch, m.epoch, m.assigned, m.revoking, m.revokeDeadline = m.epoch, g.assignmentEpoch, keep, partSet{}, time.Time{}
	m.state = MemberStable
	if unreleased {
		m.state = MemberUnreleasedPartitions
	}
}

// ownsAny reports whether the owned partitions a heartbeat reported
// hold any of set; not knowing (nil: unchanged) counts as holding.
func ownsAny(owned []TopicPartitions, set partSet) bool {
	if owned == nil {
		return true
	}
	for _, tp := range owned {
		for _, p := range tp.Partitions {
			if _, ok := set[idPartition{tp.TopicID, p}]; ok {
				return true
			}
		}
	}
	return false
}

// subsetOf reports whether owned (nil: unknown, which passes) is within
// set.
func subsetOf(owned []TopicPartitions, set partSet) bool {
	for _, tp := range owned {
		for _, p := range tp.Partitions {
			if _, ok := set[idPartition{tp.TopicID, p}]; !ok {
				return false
			}
		}
	}
	return true
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
