package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describesAsConsumerGroup reports whether a classic DescribeGroups of
// the group failed because it is a consumer group (KIP-848): Kafka
// answers GROUP_ID_NOT_FOUND, and ConsumerGroupDescribe describes it.
func describesAsConsumerGroup(l kadm.DescribedGroupLag) bool {
	return errors.Is(l.DescribeErr, kerr.GroupIDNotFound)
}

// consumerGroupRows describes consumer groups (KIP-848) as
// kafka-consumer-groups --describe does for them: ConsumerGroupDescribe
// for the members and their assignments, OffsetFetch for the committed
// offsets, ListOffsets for the log ends. A group it cannot describe keeps
// the row it had.
func consumerGroupRows(ctx context.Context, adm *kadm.Client, names []string, had map[string]groupRow) map[string]groupRow {
	out := map[string]groupRow{}
	described, _ := adm.DescribeConsumerGroups(ctx, names...)
	for _, name := range names {
		d, ok := described[name]
		if !ok || d.Err != nil {
			out[name] = had[name]
			continue
		}
		r := groupRow{Group: name, Type: groupTypeConsumer, State: d.State, Protocol: d.AssignorName, Coordinator: d.Coordinator.NodeID,
			Members: []groupMemberRow{}, Partitions: []groupLagRow{}}
		owner := map[string]string{}
		topics := map[string]bool{}
		for _, m := range d.Members {
			mr := groupMemberRow{MemberID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: []string{}}
			if m.InstanceID != nil {
				mr.InstanceID = *m.InstanceID
			}
			for _, tp := range m.Assignment.Sorted() {
				for _, p := range tp.Partitions {
					name := fmt.Sprintf("%s-%d", tp.Topic, p)
					mr.Assigned = append(mr.Assigned, name)
					owner[name] = m.MemberID
					topics[tp.Topic] = true
				}
			}
			r.Members = append(r.Members, mr)
		}
		commits, err := adm.FetchOffsets(ctx, name)
		if err != nil {
			r.OffsetsError = err.Error()
		}
		committed := map[string]int64{}
		commits.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil {
				committed[fmt.Sprintf("%s-%d", o.Topic, o.Partition)] = o.At
				topics[o.Topic] = true
			}
		})
		var ends []kadm.ListedOffset
		if len(topics) > 0 {
			listed, _ := adm.ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...)
			listed.Each(func(e kadm.ListedOffset) { ends = append(ends, e) })
		}
		slices.SortFunc(ends, func(a, b kadm.ListedOffset) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		for _, e := range ends {
			name := fmt.Sprintf("%s-%d", e.Topic, e.Partition)
			at, isCommitted := committed[name]
			if !isCommitted && owner[name] == "" {
				continue
			}
			lr := groupLagRow{Partition: name, Committed: -1, LogEnd: -1, Lag: -1, Member: owner[name]}
			if isCommitted {
				lr.Committed = at
			}
			if e.Err == nil {
				lr.LogEnd = e.Offset
				if isCommitted {
					lr.Lag = e.Offset - at
				}
			}
			r.Partitions = append(r.Partitions, lr)
		}
		out[name] = r
	}
	return out
}
