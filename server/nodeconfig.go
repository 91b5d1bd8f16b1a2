package server

import (
	"fmt"
	"slices"

	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// NodeConfig is the Config of node id in a cluster whose voters are
// voters: a controller if it is one of them, else a broker, with the
// settings' quorum timing, flush policy and snapshot policy, its folder
// under dataDir, and the data folder's member secret (LoadSecret, made on
// the first start and reused by restarts). The caller adds what carries
// and hears the node: Raft.Links, Raft.Counters, the event listeners,
// Publishers and Logger. Under kraft.version 1 (Settings.KRaftVersion) the
// quorum is dynamic: voters are the initial controllers, which format
// their empty logs with themselves as the voter set. The playground and the benchmarks build their
// nodes with it, so a benchmark measures the nodes a learner watches.
func (s Settings) NodeConfig(id int32, voters []int32, clusterID, dataDir string) (Config, error) {
	kind := Broker
	if slices.Contains(voters, id) {
		kind = Controller
	}
	secret, err := LoadSecret(dataDir)
	if err != nil {
		return Config{}, fmt.Errorf("node %d: %w", id, err)
	}
	// Kafka's 0 means unbounded for queued.max.request.bytes and no delay
	// for connection.failed.authentication.delay.ms; a Config's zero takes
	// the listener's default, and negative means none.
	if s.QueuedMaxRequestBytes == 0 {
		s.QueuedMaxRequestBytes = -1
	}
	if s.FailedAuthenticationDelay == 0 {
		s.FailedAuthenticationDelay = -1
	}
	c := Config{
		Kind: kind,
		Raft: quorum.Config{
			Raft:                s.RaftConfig(id, voters, clusterID),
			Dir:                 NodeDir(dataDir, id),
			Flush:               s.Flush,
			Secret:              secret,
			SnapshotMaxNewBytes: s.SnapshotMaxNewRecordBytes,
			SnapshotMaxInterval: s.SnapshotMaxInterval,
		},
		Settings: s,
	}
	if s.KRaftVersion >= int64(raft.KRaftVersion1) {
		if err := dynamicQuorum(&c.Raft, voters, clusterID, dataDir); err != nil {
			return Config{}, fmt.Errorf("node %d: %w", id, err)
		}
	}
	return c, nil
}
