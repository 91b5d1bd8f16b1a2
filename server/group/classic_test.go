package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

var t0 = time.Unix(1_700_000_000, 0)

// answers collects what a group answered one member.
type answers struct {
	joins []JoinResult
	syncs []SyncResult
}

func (a *answers) join(r JoinResult) { a.joins = append(a.joins, r) }
func (a *answers) sync(r SyncResult) { a.syncs = append(a.syncs, r) }

func (a *answers) lastJoin(t *testing.T) JoinResult {
	t.Helper()
	if len(a.joins) == 0 {
		t.Fatal("no JoinGroup answer")
	}
	return a.joins[len(a.joins)-1]
}

func joinParams(id, newID string, protocols ...string) JoinParams {
	p := JoinParams{MemberID: id, NewMemberID: newID, ClientID: "c", SessionTimeout: 10 * time.Second,
		RebalanceTimeout: 20 * time.Second, ProtocolType: "consumer", RequireKnownMemberID: true}
	for _, name := range protocols {
		p.Protocols = append(p.Protocols, Protocol{Name: name, Metadata: []byte(name + "-" + newID + id)})
	}
	return p
}

// The classic protocol, driven by hand in time: members join with the id
// they were given (MEMBER_ID_REQUIRED), an empty group's first rebalance
// waits out its initial delay (extended while members come), the leader
// gets everyone's metadata and the protocol all prefer, the assignment is
// given out once stored, heartbeats see rebalances, a silent member's
// session expires, and the last member's leave empties the group.
func TestClassicGroupRebalances(t *testing.T) {
	g := NewGroup("g", Timing{InitialRebalanceDelay: 3 * time.Second}, t0)
	var a, b answers

	g.Join(t0, joinParams("", "a", "range", "roundrobin"), a.join)
	if r := a.lastJoin(t); r.Code != kerr.MemberIDRequired.Code || r.MemberID != "a" {
		t.Fatalf("first join: %+v", r)
	}
	g.Join(t0, joinParams("a", "", "range", "roundrobin"), a.join)
	if len(a.joins) != 1 || g.State() != PreparingRebalance {
		t.Fatalf("A answered before the initial delay: %+v, state %v", a.joins, g.State())
	}
	g.Join(t0.Add(time.Second), joinParams("", "b", "roundrobin"), b.join)
	g.Join(t0.Add(time.Second), joinParams("b", "", "roundrobin"), b.join)
	// The delay ends at 3 s, but B came meanwhile: it waits 3 s more.
	if d := g.NextDeadline(); !d.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("next deadline %v", d.Sub(t0))
	}
	g.Tick(t0.Add(3 * time.Second))
	if len(a.joins) != 1 || g.State() != PreparingRebalance {
		t.Fatalf("the initial delay did not extend: %+v", a.joins)
	}
	g.Tick(t0.Add(6 * time.Second))
	ra, rb := a.lastJoin(t), b.lastJoin(t)
	if ra.Code != 0 || ra.Generation != 1 || ra.Leader != "a" || ra.Protocol != "roundrobin" || len(ra.Members) != 2 {
		t.Fatalf("leader's answer: %+v", ra)
	}
	if rb.Code != 0 || rb.Generation != 1 || len(rb.Members) != 0 || g.State() != CompletingRebalance {
		t.Fatalf("follower's answer: %+v, state %v", rb, g.State())
	}
	if string(ra.Members[1].ProtocolMetadata) != "roundrobin-b" {
		t.Fatalf("the leader sees B's metadata as %q", ra.Members[1].ProtocolMetadata)
	}

	now := t0.Add(7 * time.Second)
	if code := g.Heartbeat(now, "b", nil, 1); code != 0 {
		t.Fatalf("heartbeat while completing: %d", code)
	}
	g.Sync(now, "b", nil, 1, nil, nil, nil, b.sync)
	g.Sync(now, "a", nil, 1, nil, nil, map[string][]byte{"a": []byte("A"), "b": []byte("B")}, a.sync)
	stores := g.TakeStores()
	if len(stores) != 1 || len(a.syncs)+len(b.syncs) != 0 || len(stores[0].Value.Members) != 2 {
		t.Fatalf("the assignment is not stored first: %d stores, answers %+v %+v", len(stores), a.syncs, b.syncs)
	}
	g.Stored(now, stores[0], 0)
	if g.State() != Stable || string(a.syncs[0].Assignment) != "A" || string(b.syncs[0].Assignment) != "B" {
		t.Fatalf("after the store: %v, %+v, %+v", g.State(), a.syncs, b.syncs)
	}
	if code := g.Heartbeat(now, "a", nil, 0); code != kerr.IllegalGeneration.Code {
		t.Fatalf("heartbeat of an old generation: %d", code)
	}
	if code := g.Heartbeat(now, "zz", nil, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of a stranger: %d", code)
	}

	// A heartbeats, B falls silent: B's session (10 s) expires.
	now = t0.Add(12 * time.Second)
	g.Heartbeat(now, "a", nil, 1)
	now = t0.Add(17*time.Second + time.Millisecond)
	g.Tick(now)
	if g.HasMember("b") || g.State() != PreparingRebalance {
		t.Fatalf("B's session did not expire: state %v", g.State())
	}
	if code := g.Heartbeat(now, "a", nil, 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat during the rebalance: %d", code)
	}
	g.Join(now, joinParams("a", "", "range", "roundrobin"), a.join)
	if r := a.lastJoin(t); r.Generation != 2 || r.Leader != "a" || r.Protocol != "range" || len(r.Members) != 1 {
		t.Fatalf("A alone: %+v", r)
	}

	if code := g.Leave(now, "a", nil); code != 0 || g.State() != Empty || g.Generation() != 3 {
		t.Fatalf("leave: %d, state %v, generation %d", code, g.State(), g.Generation())
	}
	// An empty consumer group stays one, as Kafka's ClassicGroup keeps
	// its protocol type: the tools list and describe it as such.
	if st := g.TakeStores(); len(st) != 1 || len(st[0].Value.Members) != 0 || st[0].Value.ProtocolType != "consumer" || g.ProtocolType() != "consumer" {
		t.Fatalf("the empty group is not stored as an empty consumer group: %+v", st)
	}
	if code := g.Leave(now, "a", nil); code != kerr.UnknownMemberID.Code {
		t.Fatalf("second leave: %d", code)
	}
}

// A member without a protocol in common with the group is refused; a
// failed store of the assignment answers the SyncGroups with the error
// and rebalances; a member that does not rejoin in time is dropped.
func TestClassicGroupRefusalsAndFailures(t *testing.T) {
	g := NewGroup("g", Timing{}, t0)
	var a, b, c answers
	g.Join(t0, joinParams("", "a", "range"), a.join)
	g.Join(t0, joinParams("a", "", "range"), a.join)
	if r := a.lastJoin(t); r.Code != 0 || r.Generation != 1 {
		t.Fatalf("without a delay a lone member's join completes at once: %+v", r)
	}
	g.Join(t0, joinParams("", "c", "sticky"), c.join)
	if r := c.lastJoin(t); r.Code != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("a member of another protocol: %+v", r)
	}
	g.Join(t0, joinParams("", "b", "range"), b.join)
	g.Join(t0, joinParams("b", "", "range"), b.join)
	// B's join rebalances; A must rejoin within the rebalance timeout.
	if g.State() != PreparingRebalance || len(b.joins) != 1 {
		t.Fatalf("state %v", g.State())
	}
	g.Join(t0.Add(time.Second), joinParams("a", "", "range"), a.join)
	if r := a.lastJoin(t); r.Generation != 2 || len(r.Members) != 2 {
		t.Fatalf("rejoin: %+v", r)
	}
	g.Sync(t0.Add(time.Second), "a", nil, 2, nil, nil, map[string][]byte{"a": {1}}, a.sync)
	g.Sync(t0.Add(time.Second), "b", nil, 2, nil, nil, nil, b.sync)
	st := g.TakeStores()
	g.Stored(t0.Add(time.Second), st[0], kerr.NotCoordinator.Code)
	if len(a.syncs) != 1 || a.syncs[0].Code != kerr.NotCoordinator.Code || b.syncs[0].Code != kerr.NotCoordinator.Code || g.State() != PreparingRebalance {
		t.Fatalf("failed store: %+v %+v, state %v", a.syncs, b.syncs, g.State())
	}
	// Only A rejoins; at the rebalance timeout (20 s) B is dropped.
	g.Join(t0.Add(2*time.Second), joinParams("a", "", "range"), a.join)
	g.Tick(t0.Add(21 * time.Second))
	if r := a.lastJoin(t); r.Generation != 3 || len(r.Members) != 1 || g.HasMember("b") {
		t.Fatalf("after the rebalance timeout: %+v", r)
	}
	if b.syncs = nil; g.Heartbeat(t0.Add(21*time.Second), "b", nil, 3) != kerr.UnknownMemberID.Code {
		t.Fatal("B still heartbeats")
	}
}

// A static member (group.instance.id) that restarts joins without a
// member id, takes a new one in its old place without a rebalance, and
// its old id is fenced; it does not leave a rebalance it misses, and
// LeaveGroup names it by its instance id.
func TestStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	g := NewGroup("g", Timing{}, t0)
	iid := "host-1"
	var a, a2, b answers
	pa := joinParams("", "a", "range")
	pa.InstanceID = &iid
	g.Join(t0, pa, a.join)
	if r := a.lastJoin(t); r.Code != 0 || r.MemberID != "a" || r.Generation != 1 {
		t.Fatalf("a static member needs no second join: %+v", r)
	}
	g.Sync(t0, "a", &iid, 1, nil, nil, map[string][]byte{"a": {7}}, a.sync)
	g.Stored(t0, g.TakeStores()[0], 0)
	pa2 := joinParams("", "a2", "range")
	pa2.InstanceID = &iid
	pa2.Protocols = pa.Protocols
	g.Join(t0.Add(time.Second), pa2, a2.join)
	r := a2.lastJoin(t)
	if r.Code != 0 || r.MemberID != "a2" || r.Generation != 1 || r.Leader != "a2" || !r.SkipAssignment || g.State() != Stable {
		t.Fatalf("restarted static member: %+v, state %v", r, g.State())
	}
	if code := g.Heartbeat(t0.Add(time.Second), "a", &iid, 1); code != kerr.FencedInstanceID.Code {
		t.Fatalf("the old instance's heartbeat: %d", code)
	}
	g.Sync(t0.Add(time.Second), "a2", &iid, 1, nil, nil, nil, a2.sync)
	if len(a2.syncs) != 1 || string(a2.syncs[0].Assignment) != string([]byte{7}) {
		t.Fatalf("the assignment is kept: %+v", a2.syncs)
	}
	// B joins; the static member does not rejoin, yet stays.
	g.Join(t0.Add(2*time.Second), joinParams("", "b", "range"), b.join)
	g.Join(t0.Add(2*time.Second), joinParams("b", "", "range"), b.join)
	for _, at := range []time.Duration{10, 19} {
		if code := g.Heartbeat(t0.Add(at*time.Second), "a2", &iid, 1); code != kerr.RebalanceInProgress.Code {
			t.Fatalf("heartbeat during the rebalance: %d", code)
		}
	}
	g.Tick(t0.Add(2*time.Second + 20*time.Second))
	if rb := b.lastJoin(t); rb.Generation != 2 || !g.HasMember("a2") {
		t.Fatalf("after the rebalance: %+v, a2 member %v", rb, g.HasMember("a2"))
	}
	if code := g.Leave(t0.Add(23*time.Second), "", &iid); code != 0 || g.HasMember("a2") {
		t.Fatalf("leave by instance id: %d", code)
	}
}

// A member may not move to another instance: its rejoin with a new
// group.instance.id is UNKNOWN_MEMBER_ID, as Kafka's validateMember has
// it, so no instance is left naming a member that left, and the old
// instance joins again as a new member.
func TestMemberCannotChangeItsInstance(t *testing.T) {
	g := NewGroup("g", Timing{}, t0)
	var a answers
	j, i := "j", "i"
	p := joinParams("", "x")
	p.Protocols, p.InstanceID = []Protocol{{Name: "range"}}, &j
	g.Join(t0, p, a.join)
	g.Tick(t0.Add(time.Second))
	if r := a.lastJoin(t); r.Code != 0 || r.MemberID != "x" {
		t.Fatalf("static join: %+v", r)
	}
	p.MemberID, p.NewMemberID, p.InstanceID = "x", "", &i
	g.Join(t0.Add(2*time.Second), p, a.join)
	if r := a.lastJoin(t); r.Code != kerr.UnknownMemberID.Code {
		t.Fatalf("rejoin as another instance: %+v, want UNKNOWN_MEMBER_ID", r)
	}
	if code := g.Heartbeat(t0.Add(2*time.Second), "x", &i, g.Generation()); code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat as another instance: %d", code)
	}
	if code := g.Leave(t0.Add(3*time.Second), "x", &j); code != 0 {
		t.Fatalf("leave: %d", code)
	}
	p.MemberID, p.NewMemberID, p.InstanceID = "", "y", &j
	g.Join(t0.Add(4*time.Second), p, a.join)
	g.Tick(t0.Add(5 * time.Second))
	if r := a.lastJoin(t); r.Code != 0 || r.MemberID != "y" {
		t.Fatalf("the instance joins again: %+v", r)
	}
}

// A static leader that does not rejoin a rebalance stays a member (its
// session decides) but gives up leading to a member that did rejoin, so
// that someone gets the members' metadata to assign.
func TestStaticLeaderThatDidNotRejoinGivesWay(t *testing.T) {
	g := NewGroup("g", Timing{}, t0)
	var a, b answers
	ia, ib := "a", "b"
	pa := joinParams("", "A", "range")
	pa.InstanceID = &ia
	g.Join(t0, pa, a.join)
	if r := a.lastJoin(t); r.Code != 0 || r.Leader != "A" || r.Generation != 1 {
		t.Fatalf("A's join: %+v", r)
	}
	pb := joinParams("", "B", "range")
	pb.InstanceID = &ib
	g.Join(t0.Add(time.Second), pb, b.join) // a rebalance A never rejoins
	for _, at := range []time.Duration{9, 18} {
		if code := g.Heartbeat(t0.Add(at*time.Second), "A", &ia, 1); code != kerr.RebalanceInProgress.Code {
			t.Fatalf("A's heartbeat at %ds: %d", at, code)
		}
	}
	g.Tick(t0.Add(21 * time.Second)) // the rebalance timeout
	r := b.lastJoin(t)
	if r.Code != 0 || r.Leader != "B" || r.Generation != 2 || len(r.Members) != 2 || !g.HasMember("A") {
		t.Fatalf("B's join after the timeout: %+v (A still a member: %v)", r, g.HasMember("A"))
	}
}
