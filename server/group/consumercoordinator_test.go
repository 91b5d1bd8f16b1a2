package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newConsumerTestCoordinator(l *memLog) *Coordinator {
	topics := fakeTopics{"t": topicT}
	return New(Config{Log: l, NumPartitions: func() int32 { return 1 }, Timing: ctiming, Topics: func() Topics { return topics }})
}

func cgHeartbeat(member string, epoch int32, join bool) *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.MemberEpoch = 1, "g", member, epoch
	if join {
		r.RebalanceTimeoutMillis, r.SubscribedTopicNames, r.Topics = 30000, []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	return r
}

// The coordinator serves consumer groups through its APIs: a member
// joins by ConsumerGroupHeartbeat and commits and fetches at its epoch
// (STALE_MEMBER_EPOCH otherwise, and OffsetCommit before v9 is refused);
// classic requests to the group are refused, and the heartbeat to a
// classic group with members is GROUP_ID_NOT_FOUND; ListGroups and
// ConsumerGroupDescribe show it; another coordinator loading the
// partition has the member at its epoch; DeleteGroups takes it once
// empty, and a later load finds nothing.
func TestCoordinatorServesConsumerGroups(t *testing.T) {
	l := newMemLog()
	c1 := newConsumerTestCoordinator(l)
	defer c1.Close()
	c1.Elect(map[int32]int32{0: 1})
	loaded(t, c1)
	ch, answer := answerTo()

	bad := cgHeartbeat("", 0, true)
	c1.consumerGroupHeartbeat(bad, "client", "/127.0.0.1", answer)
	if r := await(t, ch).(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("v1 join without a member id: %+v", r)
	}
	c1.consumerGroupHeartbeat(cgHeartbeat("A", 0, true), "client", "/127.0.0.1", answer)
	hr := await(t, ch).(*kmsg.ConsumerGroupHeartbeatResponse)
	if hr.ErrorCode != 0 || hr.MemberEpoch != 1 || hr.Assignment == nil || len(hr.Assignment.Topics) != 1 || len(hr.Assignment.Topics[0].Partitions) != 4 || hr.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("join: %+v", hr)
	}

	commit := func(c *Coordinator, version int16, epoch int32) int16 {
		r := commitReq("g", epoch, "A", 7)
		r.Version = version
		c.offsetCommit(r, answer)
		return await(t, ch).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(c1, 9, 1); code != 0 {
		t.Fatalf("commit at epoch 1: %v", kerr.ErrorForCode(code))
	}
	if code := commit(c1, 9, 0); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at epoch 0: %v", kerr.ErrorForCode(code))
	}
	if code := commit(c1, 8, 1); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("commit v8: %v", kerr.ErrorForCode(code))
	}
	fetch := func(epoch int32) int16 {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version = 9
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group, g.MemberID, g.MemberEpoch = "g", kmsg.StringPtr("A"), epoch
		r.Groups = []kmsg.OffsetFetchRequestGroup{g}
		c1.offsetFetch(r, answer)
		return await(t, ch).(*kmsg.OffsetFetchResponse).Groups[0].ErrorCode
	}
	if code := fetch(1); code != 0 {
		t.Fatalf("fetch at epoch 1: %v", kerr.ErrorForCode(code))
	}
	if code := fetch(2); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("fetch at epoch 2: %v", kerr.ErrorForCode(code))
	}

	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis, j.ProtocolType = 9, "g", 30000, 30000, "consumer"
	c1.joinGroup(j, "client", "/127.0.0.1", answer)
	if r := await(t, ch).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join to a consumer group: %+v", r)
	}
	j.Group = "classic"
	jp := kmsg.NewJoinGroupRequestProtocol()
	jp.Name, jp.Metadata = "range", []byte{1}
	j.Protocols = []kmsg.JoinGroupRequestProtocol{jp}
	c1.joinGroup(j, "client", "/127.0.0.1", answer)
	jr := await(t, ch).(*kmsg.JoinGroupResponse) // MEMBER_ID_REQUIRED: the group has a pending member
	toClassic := cgHeartbeat("B", 0, true)
	toClassic.Group = "classic"
	c1.consumerGroupHeartbeat(toClassic, "client", "/127.0.0.1", answer)
	if r := await(t, ch).(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("heartbeat to a classic group with member %s pending: %+v", jr.MemberID, r)
	}

	lg := kmsg.NewPtrListGroupsRequest()
	lg.Version, lg.TypesFilter = 5, []string{"consumer"}
	c1.listGroups(lg, answer)
	if r := await(t, ch).(*kmsg.ListGroupsResponse); len(r.Groups) != 1 || r.Groups[0].Group != "g" || r.Groups[0].GroupType != "consumer" || r.Groups[0].GroupState != "Stable" {
		t.Fatalf("ListGroups of type consumer: %+v", r.Groups)
	}
	describe := func(c *Coordinator, id string) kmsg.ConsumerGroupDescribeResponseGroup {
		d := kmsg.NewPtrConsumerGroupDescribeRequest()
		d.Version, d.Groups = 1, []string{id}
		c.consumerGroupDescribe(d, answer)
		return await(t, ch).(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
	}
	if d := describe(c1, "classic"); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("ConsumerGroupDescribe of a classic group: %+v", d)
	}
	d := describe(c1, "g")
	if d.ErrorCode != 0 || d.State != "Stable" || d.Epoch != 1 || d.AssignorName != "uniform" || len(d.Members) != 1 ||
		d.Members[0].Assignment.TopicPartitions[0].Topic != "t" || d.Members[0].MemberType != 1 {
		t.Fatalf("ConsumerGroupDescribe: %+v", d)
	}

	c1.Elect(nil)
	c2 := newConsumerTestCoordinator(l)
	defer c2.Close()
	c2.Elect(map[int32]int32{0: 2})
	loaded(t, c2)
	c2.consumerGroupHeartbeat(cgHeartbeat("A", 1, false), "client", "/127.0.0.1", answer)
	if r := await(t, ch).(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode != 0 || r.MemberEpoch != 1 || r.Assignment != nil {
		t.Fatalf("heartbeat to the new coordinator: %+v", r)
	}
	if d2 := describe(c2, "g"); d2.State != "Stable" || len(d2.Members) != 1 || d2.Members[0].MemberEpoch != 1 {
		t.Fatalf("loaded group: %+v", d2)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g"}
	c2.deleteGroups(del, answer)
	if r := await(t, ch).(*kmsg.DeleteGroupsResponse); r.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete with a member: %+v", r.Groups[0])
	}
	c2.consumerGroupHeartbeat(cgHeartbeat("A", -1, false), "client", "/127.0.0.1", answer)
	if r := await(t, ch).(*kmsg.ConsumerGroupHeartbeatResponse); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", r)
	}
	c2.deleteGroups(del, answer)
	if r := await(t, ch).(*kmsg.DeleteGroupsResponse); r.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete: %+v", r.Groups[0])
	}
	// Made again and left empty, the consumer group becomes a classic
	// group at a classic member's join.
	c2.consumerGroupHeartbeat(cgHeartbeat("A", 0, true), "client", "/127.0.0.1", answer)
	await(t, ch)
	c2.consumerGroupHeartbeat(cgHeartbeat("A", -1, false), "client", "/127.0.0.1", answer)
	await(t, ch)
	j.Group = "g"
	c2.joinGroup(j, "client", "/127.0.0.1", answer)
	if r := await(t, ch).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("classic join to an empty consumer group: %+v", r)
	}
	c2.deleteGroups(del, answer)
	if r := await(t, ch).(*kmsg.DeleteGroupsResponse); r.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete the classic group: %+v", r.Groups[0])
	}

	c2.Elect(nil)
	c3 := newConsumerTestCoordinator(l)
	defer c3.Close()
	c3.Elect(map[int32]int32{0: 3})
	loaded(t, c3)
	if d3 := describe(c3, "g"); d3.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("deleted group loaded: %+v", d3)
	}
}
