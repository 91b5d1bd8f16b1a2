package group

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// fakeTopics is topic metadata made up for a test.
type fakeTopics map[string]TopicInfo

func (f fakeTopics) ByName(n string) (TopicInfo, bool) { t, ok := f[n]; return t, ok }
func (f fakeTopics) ByID(id [16]byte) (TopicInfo, bool) {
	for _, t := range f {
		if t.ID == id {
			return t, true
		}
	}
	return TopicInfo{}, false
}
func (f fakeTopics) Names() []string { return slices.Sorted(maps.Keys(f)) }

var (
	topicT  = TopicInfo{Name: "t", ID: [16]byte{1}, Partitions: 4}
	topicU  = TopicInfo{Name: "u", ID: [16]byte{2}, Partitions: 2}
	ctiming = Timing{ConsumerSessionTimeout: 45 * time.Second, ConsumerHeartbeatInterval: 5 * time.Second}
)

func joinHB(id string, topics ...string) HeartbeatParams {
	return HeartbeatParams{MemberID: id, MemberEpoch: 0, ClientID: "c", Host: "/127.0.0.1", RebalanceTimeoutMs: 30000, Topics: topics, Owned: []TopicPartitions{}}
}

// hb is a plain heartbeat that reports the partitions the member owns.
func hb(id string, epoch int32, owned ...int32) HeartbeatParams {
	p := HeartbeatParams{MemberID: id, MemberEpoch: epoch, RebalanceTimeoutMs: -1, ClientID: "c", Host: "/127.0.0.1"}
	p.Owned = []TopicPartitions{}
	if len(owned) > 0 {
		p.Owned = []TopicPartitions{{TopicID: topicT.ID, Partitions: owned}}
	}
	return p
}

// parts are the partitions of topic t in an assignment.
func parts(tps []TopicPartitions) []int32 {
	var out []int32
	for _, tp := range tps {
		out = append(out, tp.Partitions...)
	}
	slices.Sort(out)
	return out
}

func mustOK(t *testing.T, what string, r HeartbeatResult) HeartbeatResult {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("%s: %v %s", what, kerr.ErrorForCode(r.Code), r.Message)
	}
	return r
}

// A second member's join moves partitions only once their owner said it
// revoked them: the owner first keeps its epoch and is told to give some
// up, the newcomer waits at the new epoch with nothing, and gets them
// once the owner's heartbeat no longer lists them.
func TestConsumerGroupReconcilesRevokeFirst(t *testing.T) {
	topics := fakeTopics{"t": topicT}
	g := NewConsumerGroup("g", ctiming)
	now := t0

	a := mustOK(t, "A joins", g.Heartbeat(now, joinHB("A", "t"), topics))
	if a.MemberEpoch != 1 || !slices.Equal(parts(a.Assignment), []int32{0, 1, 2, 3}) || a.HeartbeatInterval != 5*time.Second {
		t.Fatalf("A joined: %+v", a)
	}
	if g.State() != ConsumerStable {
		t.Fatalf("state %v", g.State())
	}
	b := mustOK(t, "B joins", g.Heartbeat(now, joinHB("B", "t"), topics))
	if b.MemberEpoch != 2 || !b.HasAssignment || len(parts(b.Assignment)) != 0 {
		t.Fatalf("B joined: %+v; want epoch 2 and nothing yet", b)
	}
	if g.State() != ConsumerReconciling {
		t.Fatalf("state %v", g.State())
	}
	a = mustOK(t, "A heartbeats", g.Heartbeat(now, hb("A", 1, 0, 1, 2, 3), topics))
	if a.MemberEpoch != 1 || !a.HasAssignment || len(parts(a.Assignment)) != 2 {
		t.Fatalf("A asked to revoke: %+v; want epoch 1 and 2 partitions", a)
	}
	kept := parts(a.Assignment)
	b = mustOK(t, "B heartbeats", g.Heartbeat(now, hb("B", 2), topics))
	if len(parts(b.Assignment)) != 0 {
		t.Fatalf("B got partitions A still owns: %+v", b)
	}
	a = mustOK(t, "A revoked", g.Heartbeat(now, hb("A", 1, kept...), topics))
	if a.MemberEpoch != 2 || a.HasAssignment {
		t.Fatalf("A after revoking: %+v; want epoch 2, no new assignment", a)
	}
	b = mustOK(t, "B heartbeats", g.Heartbeat(now, hb("B", 2), topics))
	got := parts(b.Assignment)
	if len(got) != 2 || slices.ContainsFunc(got, func(p int32) bool { return slices.Contains(kept, p) }) {
		t.Fatalf("B got %v; A kept %v", got, kept)
	}
	g.Heartbeat(now, hb("B", 2, got...), topics)
	if g.State() != ConsumerStable || g.Epoch() != 2 || g.AssignmentEpoch() != 2 {
		t.Fatalf("state %v epoch %d/%d", g.State(), g.Epoch(), g.AssignmentEpoch())
	}

	// A's heartbeats stop: its session expires, B gets everything.
	now = now.Add(30 * time.Second)
	g.Heartbeat(now, hb("B", 2, got...), topics)
	if d := g.NextDeadline(); !d.Equal(t0.Add(45 * time.Second)) {
		t.Fatalf("next deadline %v", d.Sub(t0))
	}
	now = t0.Add(45 * time.Second)
	g.Tick(now, topics)
	if g.HasMember("A") || g.Epoch() != 3 {
		t.Fatalf("A not fenced: epoch %d", g.Epoch())
	}
	b = mustOK(t, "B alone", g.Heartbeat(now, hb("B", 2, got...), topics))
	if b.MemberEpoch != 3 || !slices.Equal(parts(b.Assignment), []int32{0, 1, 2, 3}) {
		t.Fatalf("B alone: %+v", b)
	}
}

// A heartbeat with an epoch ahead of the member's, or behind it other
// than the previous one, is fenced; the previous epoch passes when the
// member owns no more than it is assigned (the bump's answer was lost).
// An unknown member is UNKNOWN_MEMBER_ID; a new subscription bumps the
// group epoch; a leave (-1) frees the member's partitions.
func TestConsumerGroupEpochsAndLeave(t *testing.T) {
	topics := fakeTopics{"t": topicT, "u": topicU}
	g := NewConsumerGroup("g", ctiming)
	mustOK(t, "A joins", g.Heartbeat(t0, joinHB("A", "t"), topics))
	if r := g.Heartbeat(t0, hb("A", 5), topics); r.Code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("epoch ahead: %+v", r)
	}
	if r := g.Heartbeat(t0, hb("X", 1), topics); r.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %+v", r)
	}
	p := hb("A", 1, 0, 1, 2, 3)
	p.Topics = []string{"t", "u"}
	a := mustOK(t, "A subscribes to u", g.Heartbeat(t0, p, topics))
	if a.MemberEpoch != 2 || len(parts(a.Assignment)) != 6 {
		t.Fatalf("after subscribing to u: %+v", a)
	}
	// The previous epoch passes with what the member owns.
	mustOK(t, "A at its previous epoch", g.Heartbeat(t0, hb("A", 1, 0, 1), topics))
	if r := g.Heartbeat(t0, hb("A", 0), topics); r.Code != 0 || r.MemberEpoch != 2 || !r.HasAssignment {
		t.Fatalf("rejoin with epoch 0: %+v", r)
	}
	mustOK(t, "B joins", g.Heartbeat(t0, joinHB("B", "t"), topics))
	l := g.Heartbeat(t0, HeartbeatParams{MemberID: "A", MemberEpoch: -1, RebalanceTimeoutMs: -1}, topics)
	if l.Code != 0 || l.MemberEpoch != -1 || g.HasMember("A") {
		t.Fatalf("leave: %+v", l)
	}
	b := mustOK(t, "B alone", g.Heartbeat(t0, hb("B", 3), topics))
	if len(parts(b.Assignment)) != 4 {
		t.Fatalf("B after A left: %+v", b)
	}
	commit := func(epoch int32, version int16) (int16, int16) {
		code, partition := g.ValidateCommit("B", epoch, version)
		if partition == nil {
			return code, 0
		}
		return code, partition(topicT.ID, 0)
	}
	if code, pc := commit(b.MemberEpoch, 9); code != 0 || pc != 0 {
		t.Fatalf("commit at the member's epoch: %v %v", kerr.ErrorForCode(code), kerr.ErrorForCode(pc))
	}
	if code, _ := commit(b.MemberEpoch+1, 9); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at a newer epoch: %v", kerr.ErrorForCode(code))
	}
	// B got t-0 at its epoch: at the one before, the partition was not
	// its own.
	if code, pc := commit(b.MemberEpoch-1, 9); code != 0 || pc != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at an epoch before the partition's: %v %v", kerr.ErrorForCode(code), kerr.ErrorForCode(pc))
	}
	if code, _ := commit(b.MemberEpoch, 8); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("commit v8: %v", kerr.ErrorForCode(code))
	}
	if code, _ := g.ValidateCommit("", -1, 9); code != kerr.UnknownMemberID.Code {
		t.Fatalf("admin commit to a group with members: %v", kerr.ErrorForCode(code))
	}
	// C joins for u alone: B moves to the new epoch keeping t; a commit
	// at its former epoch still passes for t-0, assigned then.
	mustOK(t, "C joins", g.Heartbeat(t0, joinHB("C", "u"), topics))
	b2 := mustOK(t, "B at the new epoch", g.Heartbeat(t0, hb("B", b.MemberEpoch, 0, 1, 2, 3), topics))
	if b2.MemberEpoch != b.MemberEpoch+1 {
		t.Fatalf("B after C joined: %+v", b2)
	}
	if code, pc := commit(b.MemberEpoch, 9); code != 0 || pc != 0 {
		t.Fatalf("commit at the epoch t-0 was assigned at: %v %v", kerr.ErrorForCode(code), kerr.ErrorForCode(pc))
	}
}

// A static member that leaves with epoch -2 keeps its partitions for
// its instance; the instance back under a new member id takes them over,
// without a rebalance; another member of the same instance while the
// first is still there is UNRELEASED_INSTANCE_ID.
func TestConsumerGroupStaticMember(t *testing.T) {
	topics := fakeTopics{"t": topicT}
	g := NewConsumerGroup("g", ctiming)
	inst := "i-1"
	p := joinHB("A", "t")
	p.InstanceID = &inst
	mustOK(t, "A joins", g.Heartbeat(t0, p, topics))
	p2 := joinHB("A2", "t")
	p2.InstanceID = &inst
	if r := g.Heartbeat(t0, p2, topics); r.Code != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("second member of the instance: %+v", r)
	}
	l := g.Heartbeat(t0, HeartbeatParams{MemberID: "A", MemberEpoch: -2, InstanceID: &inst, RebalanceTimeoutMs: -1}, topics)
	if l.Code != 0 || l.MemberEpoch != -2 || g.Epoch() != 1 {
		t.Fatalf("static leave: %+v, epoch %d", l, g.Epoch())
	}
	r := mustOK(t, "instance back", g.Heartbeat(t0, p2, topics))
	if r.MemberEpoch != 1 || len(parts(r.Assignment)) != 4 || g.HasMember("A") || g.Epoch() != 1 {
		t.Fatalf("instance back: %+v, epoch %d", r, g.Epoch())
	}
}

// A member that does not revoke within its rebalance timeout is fenced.
func TestConsumerGroupRebalanceTimeout(t *testing.T) {
	topics := fakeTopics{"t": topicT}
	g := NewConsumerGroup("g", ctiming)
	mustOK(t, "A joins", g.Heartbeat(t0, joinHB("A", "t"), topics))
	mustOK(t, "B joins", g.Heartbeat(t0, joinHB("B", "t"), topics))
	mustOK(t, "A told to revoke", g.Heartbeat(t0, hb("A", 1, 0, 1, 2, 3), topics))
	for now := t0; now.Before(t0.Add(31 * time.Second)); now = now.Add(5 * time.Second) {
		g.Heartbeat(now, hb("A", 1, 0, 1, 2, 3), topics)
		g.Heartbeat(now, hb("B", 2), topics)
		if d := g.NextDeadline(); !now.Before(d) {
			g.Tick(now, topics)
		}
	}
	if g.HasMember("A") {
		t.Fatal("A kept its partitions past its rebalance timeout")
	}
}

// The assignors: uniform keeps partitions where they were while the
// balance allows; range gives contiguous ranges.
func TestAssignors(t *testing.T) {
	subs := map[string][]TopicInfo{"a": {topicT}, "b": {topicT}, "c": {topicT}}
	prev := map[string]partSet{"a": {{topicT.ID, 0}: {}, {topicT.ID, 1}: {}, {topicT.ID, 2}: {}, {topicT.ID, 3}: {}}}
	u := uniformAssign(subs, prev)
	if len(u["a"]) != 2 || len(u["b"])+len(u["c"]) != 2 || len(u["b"]) == 0 {
		t.Fatalf("uniform: %v", u)
	}
	for tp := range u["a"] {
		if _, ok := prev["a"][tp]; !ok {
			t.Fatalf("uniform moved a's partition %v", tp)
		}
	}
	r := rangeAssign(subs, nil)
	if _, ok := r["a"][idPartition{topicT.ID, 1}]; !ok || len(r["a"]) != 2 || len(r["c"]) != 1 {
		t.Fatalf("range: %v", r)
	}
}

// What a group writes, replayed as a load replays it, is the group again:
// members keep their epochs, states and assignments; a deleted group
// leaves nothing.
func TestConsumerGroupRecordsReload(t *testing.T) {
	topics := fakeTopics{"t": topicT}
	g := NewConsumerGroup("g", ctiming)
	var log []storage.Record
	step := func(p HeartbeatParams) HeartbeatResult {
		r := mustOK(t, p.MemberID, g.Heartbeat(t0, p, topics))
		log = append(log, g.TakeRecords()...)
		return r
	}
	step(joinHB("A", "t"))
	step(joinHB("B", "t"))
	step(hb("A", 1, 0, 1, 2, 3))
	st := newLoadState()
	for i, rec := range log {
		rec.Offset = int64(i)
		if err := st.replay(rec); err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
	}
	loaded := st.consumerGroups(ctiming, t0)["g"]
	if loaded == nil || loaded.Epoch() != 2 || loaded.AssignmentEpoch() != 2 {
		t.Fatalf("loaded %+v", loaded)
	}
	for id, m := range g.members {
		lm := loaded.members[id]
		if lm == nil || lm.epoch != m.epoch || lm.state != m.state || !maps.Equal(lm.assigned, m.assigned) || !maps.Equal(lm.revoking, m.revoking) || !maps.Equal(lm.target, m.target) || !maps.Equal(lm.since, m.since) {
			t.Fatalf("member %s loaded as %+v; was %+v", id, lm, m)
		}
	}
	if recs := loaded.TakeRecords(); len(recs) != 0 {
		t.Fatalf("a loaded group writes %d records again", len(recs))
	}
	// The reloaded group goes on where it was.
	if r := loaded.Heartbeat(t0, hb("A", 1, 0, 1, 2, 3), topics); r.Code != 0 || r.MemberEpoch != 1 {
		t.Fatalf("A after the reload: %+v", r)
	}
	g.Heartbeat(t0, HeartbeatParams{MemberID: "A", MemberEpoch: -1, RebalanceTimeoutMs: -1}, topics)
	g.Heartbeat(t0, HeartbeatParams{MemberID: "B", MemberEpoch: -1, RebalanceTimeoutMs: -1}, topics)
	g.Delete()
	log = append(log, g.TakeRecords()...)
	st = newLoadState()
	for i, rec := range log {
		rec.Offset = int64(i)
		if err := st.replay(rec); err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
	}
	if n := len(st.consumer); n != 0 {
		t.Fatalf("deleted group loaded: %+v", st.consumer)
	}
}

// Consumer group records encode in Kafka's layout: the key's type, then
// version 0 of the value.
func TestConsumerRecordsRoundTrip(t *testing.T) {
	inst := "i"
	recs := []storage.Record{
		ConsumerGroupMetadataRecord("g", 7, false),
		ConsumerGroupMemberRecord("g", "m", &MemberSubscription{InstanceID: &inst, ClientID: "c", ClientHost: "/h", Topics: []string{"t"}, RebalanceTimeoutMs: 300000}),
		ConsumerGroupTargetMetadataRecord("g", 7, false),
		ConsumerGroupTargetMemberRecord("g", "m", []TopicPartitions{{TopicID: topicT.ID, Partitions: []int32{0, 2}}}, false),
		ConsumerGroupCurrentRecord("g", "m", &MemberAssignment{MemberEpoch: 7, PreviousMemberEpoch: 6, State: MemberUnrevokedPartitions,
			Assigned: []TopicPartitions{{TopicID: topicT.ID, Partitions: []int32{0}}}, PendingRevocation: []TopicPartitions{{TopicID: topicT.ID, Partitions: []int32{1}}}}),
	}
	types := []RecordType{3, 5, 6, 7, 8}
	for i, rec := range recs {
		if rec.Key[0] != 0 || RecordType(rec.Key[1]) != types[i] || rec.Value[0] != 0 || rec.Value[1] != 0 {
			t.Fatalf("record %d: key %x value %x; want type %d, value version 0", i, rec.Key[:2], rec.Value[:2], types[i])
		}
		d, err := Decode(rec.Key, rec.Value)
		if err != nil || d.Consumer == nil || d.Group != "g" {
			t.Fatalf("record %d: %+v, %v", i, d, err)
		}
		again := d.Consumer.Encode()
		if string(again.Key) != string(rec.Key) || string(again.Value) != string(rec.Value) {
			t.Fatalf("record %d encodes back as %x/%x; was %x/%x", i, again.Key, again.Value, rec.Key, rec.Value)
		}
	}
	for _, tomb := range []storage.Record{ConsumerGroupMetadataRecord("g", 0, true), ConsumerGroupCurrentRecord("g", "m", nil)} {
		d, err := Decode(tomb.Key, tomb.Value)
		if err != nil || !d.Consumer.Tombstone {
			t.Fatalf("tombstone: %+v, %v", d, err)
		}
	}
}

// A subscription by regular expression takes the topics whose whole name
// matches, never an internal one; a matching topic created later bumps
// the group epoch at the next heartbeat and is assigned.
func TestConsumerGroupRegexSubscription(t *testing.T) {
	topics := fakeTopics{"t": topicT, "__consumer_offsets": {Name: "__consumer_offsets", ID: [16]byte{9}, Partitions: 3}, "tt": {Name: "tt", ID: [16]byte{3}, Partitions: 1}}
	g := NewConsumerGroup("g", ctiming)
	re := "t|u.*"
	p := joinHB("A")
	p.Topics, p.Regex = nil, &re
	a := mustOK(t, "A joins", g.Heartbeat(t0, p, topics))
	if a.MemberEpoch != 1 || len(a.Assignment) != 1 || a.Assignment[0].TopicID != topicT.ID {
		t.Fatalf("A joined with %q: %+v", re, a)
	}
	topics["u"] = topicU
	a = mustOK(t, "A after u was made", g.Heartbeat(t0, hb("A", 1, 0, 1, 2, 3), topics))
	if a.MemberEpoch != 2 || len(a.Assignment) != 2 {
		t.Fatalf("A after u was made: %+v", a)
	}
	if names := g.subscribedTopicNames(topics); !slices.Equal(names, []string{"t", "u"}) {
		t.Fatalf("subscribed topics %v", names)
	}
}
