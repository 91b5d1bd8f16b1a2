package clustertest

import (
	"cmp"
	"slices"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/fetcher"
)

// The model's data plane: it moves no records, so every hosted log is
// empty and a led partition's high watermark is 0. Each follower replica
// of a running broker sits on the ReplicaFetcherThread Kafka's hash
// places it on (num.replica.fetchers is Kafka's default, 1, as on the real
// engine), but the model sends no fetches: its threads have had no answer,
// so their lag and the leader's high watermark are unknown (-1), and a
// leader has heard no follower's log end.

// replicaStates are a partition's replicas as their brokers host them.
func (e *Engine) replicaStates(replicas []int32, leader int32) []view.PartitionReplica {
	out := make([]view.PartitionReplica, 0, len(replicas))
	for _, b := range replicas {
		r := view.PartitionReplica{Broker: b, LogStartOffset: -1, LogEndOffset: -1, HighWatermark: -1, LeaderLogEndOffset: -1, LeaderLastCaughtUpTimestamp: -1}
		if e.live(b) {
			r.Hosted, r.LogStartOffset, r.LogEndOffset, r.HighWatermark = true, 0, 0, 0
			r.Leading = b == leader
		}
		out = append(out, r)
	}
	return out
}

// partitionHWM is the high watermark on the partition's leader, -1 when
// no running broker leads it.
func (e *Engine) partitionHWM(leader int32) int64 {
	if leader == view.NoLeader || !e.live(leader) {
		return -1
	}
	return 0
}

// fillFetchers gives every running broker its fetcher threads: one per
// leader broker it follows a partition of and fetcher id.
func (e *Engine) fillFetchers(v *view.View) {
	type threadKey struct {
		source int32
		id     int
	}
	threads := map[int32]map[threadKey]*view.FetcherThread{}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			if p.Leader == view.NoLeader {
				continue
			}
			for _, b := range p.Replicas {
				if b == p.Leader || !e.live(b) {
					continue
				}
				key := threadKey{p.Leader, fetcher.FetcherID(fetcher.TopicPartition{Topic: t.Name, Partition: p.Partition}, fetcher.DefaultNumReplicaFetchers)}
				if threads[b] == nil {
					threads[b] = map[threadKey]*view.FetcherThread{}
				}
				th, ok := threads[b][key]
				if !ok {
					th = &view.FetcherThread{Name: fetcher.ThreadName(key.id, key.source), FetcherID: key.id, SourceBroker: key.source, LastResponseTimestamp: -1}
					threads[b][key] = th
				}
				th.Partitions = append(th.Partitions, view.FetcherPartition{
					Topic: t.Name, Partition: p.Partition, State: view.FetchStateFetching,
					FetchOffset: 0, LastFetchedEpoch: -1, CurrentLeaderEpoch: p.LeaderEpoch, Lag: -1, HighWatermark: -1,
				})
			}
		}
	}
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Broker == nil {
			continue
		}
		n.Broker.Fetchers = []view.FetcherThread{}
		for _, th := range threads[n.ID] {
			slices.SortFunc(th.Partitions, func(a, b view.FetcherPartition) int {
				return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
			})
			n.Broker.Fetchers = append(n.Broker.Fetchers, *th)
		}
		slices.SortFunc(n.Broker.Fetchers, func(a, b view.FetcherThread) int {
			return cmp.Or(cmp.Compare(a.SourceBroker, b.SourceBroker), cmp.Compare(a.FetcherID, b.FetcherID))
		})
	}
}
