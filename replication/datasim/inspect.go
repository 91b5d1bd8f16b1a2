package datasim

import (
	"maps"
	"slices"

	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
)

// Replica is one replica a running broker hosts, for a playground's
// views (kraftlab up --sim).
type Replica struct {
	Topic     string
	Partition int32
	P         *partition.Partition
}

// Replicas are the replicas broker id hosts while it runs, by partition;
// none while it is down or before its metadata names them.
func (s *Sim) Replicas(id int32) []Replica {
	b := s.brokers[id]
	if b == nil || !b.up {
		return nil
	}
	var out []Replica
	for _, h := range b.hosts {
		if h.p != nil {
			out = append(out, Replica{Topic: s.cfg.Topic, Partition: h.idx, P: h.p})
		}
	}
	return out
}

// Fetchers are broker id's fetcher threads, by source broker, as the
// server's fetcher manager reports its own; none while it is down.
func (s *Sim) Fetchers(id int32) fetcher.ManagerStats {
	var out fetcher.ManagerStats
	b := s.brokers[id]
	if b == nil || !b.up {
		return out
	}
	sources := slices.Sorted(maps.Keys(b.loops))
	for _, src := range sources {
		l := b.loops[src]
		if l.stopped {
			continue
		}
		out.Threads = append(out.Threads, l.m.Stats(s.env.Now()))
		out.FailedPartitions = append(out.FailedPartitions, l.m.Failed()...)
	}
	return out
}
