package group

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The versions of the consumer group APIs Kafka 4.4 serves: v1 of the
// heartbeat has the client make its member id and adds regular
// expressions; v1 of the describe adds the member type.
var (
	consumerGroupHeartbeatVersions = wire.APIRange{Key: kmsg.ConsumerGroupHeartbeat.Int16(), MinVersion: 0, MaxVersion: 1}
	consumerGroupDescribeVersions  = wire.APIRange{Key: kmsg.ConsumerGroupDescribe.Int16(), MinVersion: 0, MaxVersion: 1}
)

// consumerMemberType is ConsumerGroupDescribe v1's member type of a
// member that speaks the consumer protocol.
const consumerMemberType int8 = 1

// handleConsumerGroupHeartbeat answers a ConsumerGroupHeartbeat once the
// records it made are committed.
func (c *Coordinator) handleConsumerGroupHeartbeat(req *wire.Request) {
	c.consumerGroupHeartbeat(req.Body.(*kmsg.ConsumerGroupHeartbeatRequest), req.ClientID, clientHost(req.Peer), req.Respond)
}

// validateHeartbeat checks what a heartbeat says on its own (Kafka's
// throwIfConsumerGroupHeartbeatRequestIsInvalid).
func validateHeartbeat(r *kmsg.ConsumerGroupHeartbeatRequest) HeartbeatResult {
	bad := func(format string, args ...any) HeartbeatResult {
		return fail(kerr.InvalidRequest.Code, format, args...)
	}
	switch {
	case r.Group == "":
		return bad("GroupId can't be empty.")
	case r.InstanceID != nil && *r.InstanceID == "":
		return bad("InstanceId can't be empty.")
	case r.RackID != nil && *r.RackID == "":
		return bad("RackId can't be empty.")
	case r.MemberID == "" && (r.Version >= 1 || r.MemberEpoch != 0):
		return bad("MemberId can't be empty.")
	case r.MemberEpoch < staticLeaveEpoch:
		return bad("MemberEpoch %d is invalid.", r.MemberEpoch)
	case r.MemberEpoch == staticLeaveEpoch && r.InstanceID == nil:
		return bad("InstanceId can't be null when MemberEpoch is -2.")
	case r.SubscribedTopicNames != nil && r.SubscribedTopicRegex != nil:
		return bad("SubscribedTopicNames and SubscribedTopicRegex can't both be set.")
	case r.MemberEpoch == 0 && r.RebalanceTimeoutMillis == -1:
		return bad("RebalanceTimeoutMs must be provided in first request.")
	case r.MemberEpoch == 0 && r.SubscribedTopicNames == nil && r.SubscribedTopicRegex == nil:
		return bad("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
	case r.MemberEpoch == 0 && len(r.Topics) > 0:
		return bad("TopicPartitions must be empty when (re-)joining.")
	}
	if r.SubscribedTopicRegex != nil && *r.SubscribedTopicRegex != "" {
		if _, err := compileRegex(*r.SubscribedTopicRegex); err != nil {
			return fail(kerr.InvalidRegularExpression.Code, "SubscribedTopicRegex %q is invalid: %v", *r.SubscribedTopicRegex, err)
		}
	}
	if r.ServerAssignor != nil && !KnownAssignor(*r.ServerAssignor) {
		return fail(kerr.UnsupportedAssignor.Code, "ServerAssignor %s is not supported. Supported assignors: %s, %s.", *r.ServerAssignor, UniformAssignor, RangeAssignor)
	}
	return HeartbeatResult{}
}

// consumerGroupHeartbeat is handleConsumerGroupHeartbeat's work.
func (c *Coordinator) consumerGroupHeartbeat(r *kmsg.ConsumerGroupHeartbeatRequest, clientID, host string, answer func(kmsg.Response)) {
	respond := func(res HeartbeatResult) {
		resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
		resp.ErrorCode, resp.MemberEpoch = res.Code, res.MemberEpoch
		if res.Message != "" {
			resp.ErrorMessage = kmsg.StringPtr(res.Message)
		}
		if res.Code == 0 {
			resp.MemberID = kmsg.StringPtr(res.MemberID)
			resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval / time.Millisecond)
		}
		if res.HasAssignment {
			a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
			for _, tp := range res.Assignment {
				t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
				t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
				a.Topics = append(a.Topics, t)
			}
			if a.Topics == nil {
				a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
			}
			resp.Assignment = &a
		}
		answer(resp)
	}
	if res := validateHeartbeat(r); res.Code != 0 {
		respond(res)
		return
	}
	p := HeartbeatParams{
		MemberID: r.MemberID, MemberEpoch: r.MemberEpoch, InstanceID: r.InstanceID, RackID: r.RackID,
		ClientID: clientID, Host: host, RebalanceTimeoutMs: r.RebalanceTimeoutMillis,
		Topics: r.SubscribedTopicNames, Regex: r.SubscribedTopicRegex, ServerAssignor: r.ServerAssignor,
	}
	if p.MemberID == "" {
		p.MemberID = newUUID() // v0: the coordinator makes the id
	}
	if r.Topics != nil {
		p.Owned = make([]TopicPartitions, 0, len(r.Topics))
		for _, t := range r.Topics {
			p.Owned = append(p.Owned, TopicPartitions{TopicID: t.TopicID, Partitions: t.Partitions})
		}
	}
	s, code := c.shardFor(r.Group)
	if code != 0 {
		respond(HeartbeatResult{Code: code})
		return
	}
	var res HeartbeatResult
	var recs []storage.Record
	if code := s.do(func(now time.Time) {
		g, res0, pre := s.consumerGroupLocked(r.Group, r.MemberEpoch == 0)
		if g == nil {
			res = res0
			return
		}
		res = g.Heartbeat(now, p, c.topics())
		recs = append(pre, g.TakeRecords()...)
		if len(recs) == 0 || res.Code != 0 {
			if len(recs) > 0 {
				s.queueLocked(recs, func(int64, int16) {})
			}
			recs = nil
			return
		}
		s.queueLocked(recs, func(_ int64, code int16) {
			if code = appendError(code, false); code != 0 {
				respond(HeartbeatResult{Code: code})
				return
			}
			respond(res)
		})
	}); code != 0 {
		respond(HeartbeatResult{Code: code})
		return
	}
	if recs == nil {
		respond(res)
	}
}

// consumerGroupLocked is the consumer group id, made when create (a
// member joins) and no group has the id, or taking the place of an
// empty classic group (whose tombstone it returns to write first); else
// nil with the error. s.mu is held.
func (s *shard) consumerGroupLocked(id string, create bool) (*ConsumerGroup, HeartbeatResult, []storage.Record) {
	if g := s.cgroups[id]; g != nil {
		return g, HeartbeatResult{}, nil
	}
	var pre []storage.Record
	if cg := s.groups[id]; cg != nil {
		if !cg.IsEmpty() || cg.HasPending() {
			return nil, fail(kerr.GroupIDNotFound.Code, "Group %s is not a consumer group.", id), nil
		}
		if !create {
			return nil, fail(kerr.GroupIDNotFound.Code, "Group %s not found.", id), nil
		}
		// An empty classic group becomes a consumer group, its offsets
		// kept, as Kafka converts it.
		delete(s.groups, id)
		if cg.Generation() > 0 {
			pre = append(pre, GroupMetadataRecord(id, nil))
		}
	} else if !create {
		return nil, fail(kerr.GroupIDNotFound.Code, "Group %s not found.", id), nil
	}
	g := NewConsumerGroup(id, s.c.timing)
	s.cgroups[id] = g
	return g, HeartbeatResult{}, pre
}

// handleConsumerGroupDescribe describes consumer groups: epochs,
// assignor, and each member with its subscription, current and target
// assignments. A classic group is GROUP_ID_NOT_FOUND, so that the admin
// client asks DescribeGroups instead.
func (c *Coordinator) handleConsumerGroupDescribe(req *wire.Request) {
	c.consumerGroupDescribe(req.Body.(*kmsg.ConsumerGroupDescribeRequest), req.Respond)
}

// consumerGroupDescribe is handleConsumerGroupDescribe's work.
func (c *Coordinator) consumerGroupDescribe(r *kmsg.ConsumerGroupDescribeRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrConsumerGroupDescribeResponse()
	defer answer(resp)
	topics := c.topics()
	for _, id := range r.Groups {
		dg := kmsg.NewConsumerGroupDescribeResponseGroup()
		dg.Group = id
		s, code := c.shardFor(id)
		if code == 0 {
			code = s.do(func(time.Time) {
				g := s.cgroups[id]
				if g == nil {
					dg.ErrorCode = kerr.GroupIDNotFound.Code
					msg := fmt.Sprintf("Group %s not found.", id)
					if s.groups[id] != nil {
						msg = fmt.Sprintf("Group %s is not a consumer group.", id)
					}
					dg.ErrorMessage = kmsg.StringPtr(msg)
					return
				}
				dg.State, dg.Epoch, dg.AssignmentEpoch, dg.AssignorName = g.State().String(), g.epoch, g.assignmentEpoch, g.preferredAssignor()
				for _, m := range g.sortedMembers() {
					dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
					dm.MemberID, dm.InstanceID, dm.RackID, dm.MemberEpoch = m.id, m.sub.InstanceID, m.sub.RackID, m.epoch
					dm.ClientID, dm.ClientHost, dm.SubscribedTopics, dm.SubscribedTopicRegex = m.sub.ClientID, m.sub.ClientHost, m.sub.Topics, m.sub.Regex
					if dm.SubscribedTopics == nil {
						dm.SubscribedTopics = []string{}
					}
					dm.Assignment.TopicPartitions = describeAssignment(m.assigned, topics)
					dm.TargetAssignment.TopicPartitions = describeAssignment(m.target, topics)
					dm.MemberType = consumerMemberType
					dg.Members = append(dg.Members, dm)
				}
			})
		}
		if code != 0 {
			dg.ErrorCode = code
		}
		resp.Groups = append(resp.Groups, dg)
	}
}

// describeAssignment is set with topic names, those of topics still in
// the metadata.
func describeAssignment(set partSet, topics Topics) []kmsg.AssignmentTopicPartition {
	out := []kmsg.AssignmentTopicPartition{}
	for _, tp := range sortedTopicPartitions(set) {
		t, ok := topics.ByID(tp.TopicID)
		if !ok {
			continue
		}
		a := kmsg.AssignmentTopicPartition{TopicID: tp.TopicID, Topic: t.Name, Partitions: tp.Partitions}
		out = append(out, a)
	}
	return out
}
