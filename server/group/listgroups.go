package group

import (
	"slices"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleListGroups lists the groups of every partition the broker
// coordinates, filtered by state (v4+) and type (v5+); a partition still
// loading makes the answer COORDINATOR_LOAD_IN_PROGRESS with the rest.
func (c *Coordinator) handleListGroups(req *wire.Request) {
	c.listGroups(req.Body.(*kmsg.ListGroupsRequest), req.Respond)
}

// listGroups is handleListGroups's work, answered through answer.
func (c *Coordinator) listGroups(r *kmsg.ListGroupsRequest, answer func(kmsg.Response)) {
	resp := kmsg.NewPtrListGroupsResponse()
	defer answer(resp)
	wants := func(t GroupType) bool {
		return len(r.TypesFilter) == 0 || slices.ContainsFunc(r.TypesFilter, func(f string) bool { return strings.EqualFold(f, string(t)) })
	}
	inState := func(st string) bool {
		return len(r.StatesFilter) == 0 || slices.ContainsFunc(r.StatesFilter, func(f string) bool { return strings.EqualFold(f, st) })
	}
	for _, s := range c.allShards() {
		if code := s.do(func(time.Time) {
			for _, g := range s.groups {
				if st := g.State().String(); wants(ClassicGroupType) && inState(st) {
					lg := kmsg.NewListGroupsResponseGroup()
					lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.ID(), g.ProtocolType(), st, string(ClassicGroupType)
					resp.Groups = append(resp.Groups, lg)
				}
			}
			for _, g := range s.cgroups {
				if st := g.State().String(); wants(ConsumerGroupType) && inState(st) {
					lg := kmsg.NewListGroupsResponseGroup()
					lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.ID(), ConsumerProtocolType, st, string(ConsumerGroupType)
					resp.Groups = append(resp.Groups, lg)
				}
			}
		}); code != 0 {
			resp.ErrorCode = code
		}
	}
	slices.SortFunc(resp.Groups, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
}
