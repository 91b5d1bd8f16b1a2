package group

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleDescribeGroups describes each group asked for: its state,
// protocol and members with their metadata and assignments. An unknown
// group is Dead, or GROUP_ID_NOT_FOUND from v6 on.
func (c *Coordinator) handleDescribeGroups(req *wire.Request) {
	c.describeGroups(req.Body.(*kmsg.DescribeGroupsRequest), req.Respond)
}

// describeGroups is handleDescribeGroups's work, answered through answer.
func (c *Coordinator) describeGroups(r *kmsg.DescribeGroupsRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrDescribeGroupsResponse()
	defer answer(resp)
	for _, id := range r.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group, dg.State = id, Dead.String()
		s, code := c.shardFor(id)
		if code == 0 {
			code = s.do(func(time.Time) {
				g := s.groups[id]
				if g == nil {
					if r.Version >= 6 {
						dg.ErrorCode = kerr.GroupIDNotFound.Code
						// Kafka's words (GroupMetadataManager.group), which
						// kafka-consumer-groups prints.
						dg.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s not found.", id))
						if s.cgroups[id] != nil {
							dg.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s is not a classic group.", id))
						}
					}
					return
				}
				dg.State, dg.ProtocolType = g.State().String(), g.ProtocolType()
				if g.State() == Stable {
					dg.Protocol = g.Protocol()
				}
				for _, m := range g.Members() {
					dm := kmsg.NewDescribeGroupsResponseGroupMember()
					dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.MemberID, m.InstanceID, m.ClientID, m.ClientHost
					dm.ProtocolMetadata, dm.MemberAssignment = m.Metadata, m.Assignment
					if dm.ProtocolMetadata == nil {
						dm.ProtocolMetadata = []byte{}
					}
					if dm.MemberAssignment == nil {
						dm.MemberAssignment = []byte{}
					}
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
