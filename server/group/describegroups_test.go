package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func joinReq(member string) *kmsg.JoinGroupRequest {
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.MemberID, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis, j.ProtocolType = 3, "g", member, 30000, 30000, "consumer"
	jp := kmsg.NewJoinGroupRequestProtocol()
	jp.Name, jp.Metadata = "range", []byte{1}
	j.Protocols = []kmsg.JoinGroupRequestProtocol{jp}
	return j
}

// DescribeGroups shows a member's assignment through a rebalance, as
// Kafka's does, and its metadata only while the group is stable; a group
// it does not know is GROUP_ID_NOT_FOUND from v6 on, in Kafka's words,
// which kafka-consumer-groups prints.
func TestDescribeGroupsAsKafkaDoes(t *testing.T) {
	c := newTestCoordinator(newMemLog())
	defer c.Close()
	c.Elect(map[int32]int32{0: 1})
	loaded(t, c)

	ch, answer := answerTo()
	c.joinGroup(joinReq(""), "client", "/127.0.0.1", answer)
	jr := await(t, ch).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != 0 {
		t.Fatalf("join: %+v", jr)
	}
	s := kmsg.NewPtrSyncGroupRequest()
	s.Group, s.Generation, s.MemberID = "g", jr.Generation, jr.MemberID
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = jr.MemberID, []byte("assigned")
	s.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{a}
	c.syncGroup(s, answer)
	if sr := await(t, ch).(*kmsg.SyncGroupResponse); sr.ErrorCode != 0 {
		t.Fatalf("sync: %+v", sr)
	}

	describe := func(version int16, group string) kmsg.DescribeGroupsResponseGroup {
		t.Helper()
		d := kmsg.NewPtrDescribeGroupsRequest()
		d.Version, d.Groups = version, []string{group}
		dch, danswer := answerTo()
		c.describeGroups(d, danswer)
		return await(t, dch).(*kmsg.DescribeGroupsResponse).Groups[0]
	}
	if dg := describe(5, "g"); dg.State != "Stable" || len(dg.Members) != 1 || string(dg.Members[0].MemberAssignment) != "assigned" || len(dg.Members[0].ProtocolMetadata) != 1 {
		t.Fatalf("stable group: %+v", dg)
	}

	// A second member's join starts a rebalance; its answer waits for
	// the first member to join again.
	c.joinGroup(joinReq(""), "client-2", "/127.0.0.1", func(kmsg.Response) {})
	dg := describe(5, "g")
	if dg.State != "PreparingRebalance" || dg.Protocol != "" || len(dg.Members) != 2 {
		t.Fatalf("rebalancing group: %+v", dg)
	}
	for _, m := range dg.Members {
		want := ""
		if m.MemberID == jr.MemberID {
			want = "assigned"
		}
		if string(m.MemberAssignment) != want || len(m.ProtocolMetadata) != 0 {
			t.Errorf("member %s while rebalancing: assignment %q (want %q), metadata %v (want none)", m.MemberID, m.MemberAssignment, want, m.ProtocolMetadata)
		}
	}

	dg = describe(6, "nobody")
	if dg.ErrorCode != kerr.GroupIDNotFound.Code || dg.ErrorMessage == nil || *dg.ErrorMessage != "Group nobody not found." || dg.State != "Dead" {
		t.Fatalf("unknown group at v6: %+v", dg)
	}
	if dg = describe(5, "nobody"); dg.ErrorCode != 0 || dg.State != "Dead" {
		t.Fatalf("unknown group at v5: %+v", dg)
	}
}
