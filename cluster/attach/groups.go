package attach

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/kafkahash"
)

// readGroups reads the classic consumer groups as kafka-consumer-groups
// --describe does: ListGroups on every broker, DescribeGroups and
// OffsetFetch at each group's coordinator (which FindCoordinator names).
// The lags are against the high watermarks readTopics read. Over the
// wire there is no generation or leader (DescribeGroups carries
// neither), and a coordinator's shards are the partitions of
// __consumer_offsets it leads, loading where a group's coordinator
// answered COORDINATOR_LOAD_IN_PROGRESS.
func (p *poller) readGroups(ctx context.Context, r *reading) {
	if p.brokers == nil {
		return
	}
	adm := kadm.NewClient(p.brokers)
	described, err := adm.DescribeGroups(ctx)
	var shardErrs *kadm.ShardErrors
	if err != nil && (!errors.As(err, &shardErrs) || shardErrs.AllFailed) {
		r.fail("DescribeGroups: %v", err)
		return
	}
	r.unread[partGroups] = false
	offsets, _ := r.v.Topic(view.OffsetsTopic)
	loading := map[int32]bool{}
	var names []string
	for _, d := range described.Sorted() {
		if d.Err != nil {
			if offsets != nil && (errors.Is(d.Err, kerr.CoordinatorLoadInProgress) || errors.Is(d.Err, kerr.CoordinatorNotAvailable) || errors.Is(d.Err, kerr.NotCoordinator)) {
				loading[kafkahash.GroupPartition(d.Group, int32(len(offsets.Partitions)))] = true
			} else {
				r.fail("DescribeGroups of group %s: %v", d.Group, d.Err)
			}
			continue
		}
		names = append(names, d.Group)
	}
	fetched := adm.FetchManyOffsets(ctx, names...)
	for _, name := range names {
		d := described[name]
		g := view.Group{ID: d.Group, Coordinator: d.Coordinator.NodeID, OffsetsPartition: -1, State: view.GroupState(d.State),
			ProtocolType: d.ProtocolType, Protocol: d.Protocol, Generation: -1,
			Members: make([]view.GroupMember, 0, len(d.Members)), Offsets: []view.GroupOffset{}}
		if offsets != nil && len(offsets.Partitions) > 0 {
			g.OffsetsPartition = kafkahash.GroupPartition(d.Group, int32(len(offsets.Partitions)))
		}
		for _, m := range d.Members {
			gm := view.GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assigned: []view.TopicPartition{}}
			if m.InstanceID != nil {
				gm.InstanceID = *m.InstanceID
			}
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range a.Topics {
					for _, part := range t.Partitions {
						gm.Assigned = append(gm.Assigned, view.TopicPartition{Topic: t.Topic, Partition: part})
					}
				}
			}
			g.Members = append(g.Members, gm)
		}
		f := fetched[name]
		if f.Err != nil {
			r.fail("OffsetFetch of group %s: %v", name, f.Err)
		}
		for _, o := range f.Fetched.Sorted() {
			if o.Err != nil || o.At < 0 {
				continue // nothing committed
			}
			gov := view.GroupOffset{Topic: o.Topic, Partition: o.Partition, Committed: o.At, LeaderEpoch: o.LeaderEpoch, HighWatermark: -1, Lag: -1}
			if part, ok := r.v.Partition(o.Topic, o.Partition); ok && part.HighWatermark >= 0 {
				gov.HighWatermark, gov.Lag = part.HighWatermark, max(part.HighWatermark-o.At, 0)
			}
			g.Offsets = append(g.Offsets, gov)
		}
		r.v.Groups = append(r.v.Groups, g)
	}
	slices.SortFunc(r.v.Groups, func(a, b view.Group) int { return strings.Compare(a.ID, b.ID) })
	r.offsetsShards(offsets, loading)
}

// offsetsShards fills each broker's coordinator shards: the partitions
// of __consumer_offsets it leads, with how many of the groups read it
// serves.
func (r *reading) offsetsShards(offsets *view.Topic, loading map[int32]bool) {
	if offsets == nil {
		return
	}
	groups := map[int32]int{}
	for _, g := range r.v.Groups {
		groups[g.OffsetsPartition]++
	}
	r.shards = map[int32][]view.CoordinatorShard{}
	for _, p := range offsets.Partitions {
		if p.Leader < 0 {
			continue
		}
		r.shards[p.Leader] = append(r.shards[p.Leader], view.CoordinatorShard{
			Partition: p.Partition, LeaderEpoch: p.LeaderEpoch, Loading: loading[p.Partition], Groups: groups[p.Partition]})
	}
}
