package engine

import (
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/server"
)

// brokerStats are the running brokers' ReplicaManager snapshots, by
// broker: what each one's logs and fetchers really hold.
func (e *engine) brokerStats() map[int32]server.ReplicaManagerStats {
	out := make(map[int32]server.ReplicaManagerStats)
	for _, n := range e.all() {
		if n.kind != view.KindBroker || !n.srv.Running() {
			continue
		}
		if rm := n.srv.ReplicaManager(); rm != nil {
			out[n.id] = rm.Stats()
		}
	}
	return out
}

// dataPlaneViews fills each partition's high watermark and replicas and
// each running broker's fetcher threads and purgatories from the brokers'
// own snapshots.
func dataPlaneViews(v *view.View, stats map[int32]server.ReplicaManagerStats) {
	hosted := make(map[int32]map[view.TopicPartition]server.ReplicaStats, len(stats))
	for id, st := range stats {
		m := make(map[view.TopicPartition]server.ReplicaStats, len(st.Partitions))
		for _, r := range st.Partitions {
			m[view.TopicPartition{Topic: r.Topic, Partition: r.Partition}] = r
		}
		hosted[id] = m
	}
	for ti := range v.Topics {
		t := &v.Topics[ti]
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			tp := view.TopicPartition{Topic: t.Name, Partition: p.Partition}
			p.HighWatermark = -1
			leader, leading := hosted[p.Leader][tp]
			leading = leading && leader.LeaderID == p.Leader && leader.Role == partition.RoleLeader
			if leading {
				p.HighWatermark = leader.HighWatermark
			}
			p.ReplicaStates = make([]view.PartitionReplica, 0, len(p.Replicas))
			for _, b := range p.Replicas {
				pr := view.PartitionReplica{Broker: b, LogStartOffset: -1, LogEndOffset: -1, HighWatermark: -1, LeaderLogEndOffset: -1, LeaderLastCaughtUpTimestamp: -1}
				if r, ok := hosted[b][tp]; ok {
					pr.Hosted = true
					pr.LogStartOffset, pr.LogEndOffset, pr.HighWatermark = r.LogStartOffset, r.LogEndOffset, r.HighWatermark
					pr.Leading = r.Role == partition.RoleLeader
					if r.Damage != nil {
						pr.Damage, pr.Repaired = r.Damage.String(), r.Repaired
					}
				}
				if leading && b != p.Leader {
					for _, f := range leader.Followers {
						if f.ReplicaID == b {
							pr.LeaderLogEndOffset = f.LogEndOffset
							pr.LeaderLastCaughtUpTimestamp = unixMilli(f.LastCaughtUpTime)
						}
					}
				}
				p.ReplicaStates = append(p.ReplicaStates, pr)
			}
		}
	}
	for i := range v.Nodes {
		nv := &v.Nodes[i]
		st, ok := stats[nv.ID]
		if nv.Broker == nil {
			continue
		}
		nv.Broker.Fetchers = []view.FetcherThread{}
		if !ok {
			continue
		}
		nv.Broker.DelayedProduces, nv.Broker.DelayedFetches = st.DelayedProduces, st.DelayedFetches
		nv.Broker.LeaderThrottledBytesPerSec, nv.Broker.FollowerThrottledBytesPerSec = st.LeaderThrottledBytesPerSec, st.FollowerThrottledBytesPerSec
		for _, th := range st.Fetchers.Threads {
			nv.Broker.Fetchers = append(nv.Broker.Fetchers, fetcherThreadView(th))
		}
		for _, tp := range st.Fetchers.FailedPartitions {
			nv.Broker.FailedPartitions = append(nv.Broker.FailedPartitions, view.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}.String())
		}
	}
}

func fetcherThreadView(th fetcher.ThreadStats) view.FetcherThread {
	tv := view.FetcherThread{
		Name: th.Name, FetcherID: th.FetcherID, SourceBroker: th.SourceBroker,
		Requests: th.Requests, Errors: th.Errors, Bytes: th.Bytes,
		LastResponseTimestamp: unixMilli(th.LastResponseTime),
		Partitions:            make([]view.FetcherPartition, 0, len(th.Partitions)),
	}
	for _, p := range th.Partitions {
		fp := view.FetcherPartition{
			Topic: p.Topic, Partition: p.Partition, State: fetchState(p.State), Delayed: p.Delayed,
			FetchOffset: p.FetchOffset, LastFetchedEpoch: p.LastFetchedEpoch, CurrentLeaderEpoch: p.CurrentLeaderEpoch,
			Lag: -1, HighWatermark: p.HighWatermark, BytesPerSec: p.BytesPerSec, Records: p.Records, Bytes: p.Bytes,
			Truncations: p.Truncations, LastError: p.LastError, Throttled: p.Throttled,
		}
		if p.HasLag {
			fp.Lag = p.Lag
		}
		tv.Partitions = append(tv.Partitions, fp)
	}
	return tv
}

func fetchState(s fetcher.ReplicaState) view.FetchState {
	if s == fetcher.Truncating {
		return view.FetchStateTruncating
	}
	return view.FetchStateFetching
}
