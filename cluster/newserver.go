package cluster

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/kraftlab/kraftlab/cluster/server"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// NodeSpec is what one node of a cluster needs besides the timing: who it
// is, who votes, where its folder is and how it reaches its peers.
type NodeSpec struct {
	ID        int32
	Voters    []int32
	ClusterID string
	// DataDir is the cluster's data folder; the node's is server.NodeDir
	// under it.
	DataDir string
	// Peers returns another node's listener address.
	Peers func(id int32) (string, bool)
	// Links and Counters, if set, carry and count the node's traffic.
	Links    *wire.Links
	Counters *wire.Counters
	// OnEvent, if set, receives the node's events from its loop; it must
	// not block.
	OnEvent func(quorum.Event)
	// OnLoaderEvent, if set, receives its metadata loader's events, from
	// the same loop.
	OnLoaderEvent func(loader.Event)
	// OnControllerEvent, if set, receives a controller's quorum controller
	// events, from its goroutine; it must not block.
	OnControllerEvent func(controller.Event)
	// OnLifecycleEvent, if set, receives a broker's lifecycle events, from
	// its goroutine; it must not block.
	OnLifecycleEvent func(server.LifecycleEvent)
	// Publishers, if set, returns the parts that subscribe to the loader of
	// each incarnation (server.Config.Publishers).
	Publishers func() []loader.Publisher
	// Logger, if set, receives the node's log; nil discards it.
	Logger *slog.Logger
}

// NewServer builds a node's server with the quorum timing and policies of
// t: a controller if the node is one of the voters, else a broker. Its
// member secret is the data folder's (server.LoadSecret). The
// playground and the benchmarks build their nodes with it, so a benchmark
// measures the nodes a learner watches.
func (t Timing) NewServer(s NodeSpec) (*server.Server, error) {
	kind := server.Broker
	if slices.Contains(s.Voters, s.ID) {
		kind = server.Controller
	}
	// The playground's member secret, made on the first start in the
	// data folder and reused by restarts on it.
	secret, err := server.LoadSecret(s.DataDir)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.ID, err)
	}
	return server.New(server.Config{
		Kind: kind,
		Raft: quorum.Config{
			Raft:                t.RaftConfig(s.ID, s.Voters, s.ClusterID),
			Dir:                 server.NodeDir(s.DataDir, s.ID),
			Peers:               s.Peers,
			Flush:               t.Flush,
			Links:               s.Links,
			Counters:            s.Counters,
			Secret:              secret,
			SnapshotMaxNewBytes: t.SnapshotMaxNewRecordBytes,
			SnapshotMaxInterval: t.SnapshotMaxInterval,
			OnEvent:             s.OnEvent,
		},
		Publishers: s.Publishers,
		Controller: server.ControllerConfig{
			SessionTimeout:                t.BrokerSessionTimeout,
			NoOpInterval:                  t.MetadataMaxIdleInterval,
			UncleanLeaderElectionEnable:   t.UncleanLeaderElectionEnable,
			UncleanLeaderElectionInterval: t.UncleanLeaderElectionInterval,
			OnEvent:                       s.OnControllerEvent,
		},
		Broker: server.BrokerConfig{
			HeartbeatInterval:            t.BrokerHeartbeatInterval,
			OnEvent:                      s.OnLifecycleEvent,
			ReplicaLagTimeMax:            t.ReplicaLagTimeMax,
			ReplicaFetchWaitMax:          t.ReplicaFetchWaitMax,
			NumReplicaFetchers:           int(t.NumReplicaFetchers),
			ReplicaFetchBackoff:          t.ReplicaFetchBackoff,
			ReplicaFetchMinBytes:         int32(t.ReplicaFetchMinBytes),
			ReplicaFetchMaxBytes:         int32(t.ReplicaFetchMaxBytes),
			ReplicaFetchResponseMaxBytes: int32(t.ReplicaFetchResponseMaxBytes),
			MinInsyncReplicas:            int(t.MinInsyncReplicas),
		},
		Listener:      t.listenerConfig(kind),
		OnLoaderEvent: s.OnLoaderEvent,
		Logger:        s.Logger,
	})
}

// listenerConfig maps the listener settings onto a node of kind.
func (t Timing) listenerConfig(kind server.Kind) server.ListenerConfig {
	c := server.ListenerConfig{
		SocketRequestMaxBytes:     int32(t.SocketRequestMaxBytes),
		QueuedMaxRequestBytes:     t.QueuedMaxRequestBytes,
		MaxConnections:            int(t.MaxConnections),
		MaxConnectionsPerIP:       int(t.MaxConnectionsPerIP),
		ConnectionsMaxIdle:        t.ConnectionsMaxIdle,
		FailedAuthenticationDelay: t.FailedAuthenticationDelay,
		SaslServerMaxReceiveSize:  int32(t.SaslServerMaxReceiveSize),
		SaslAuthenticationTimeout: t.SaslAuthenticationTimeout,
	}
	if kind == server.Controller {
		c.SocketRequestMaxBytes = int32(t.ControllerSocketRequestMaxBytes)
	}
	// Kafka's 0 and -1 both mean unbounded, and 0 no delay; the wire's
	// zero means its default.
	if c.QueuedMaxRequestBytes <= 0 {
		c.QueuedMaxRequestBytes = -1
	}
	if c.FailedAuthenticationDelay == 0 {
		c.FailedAuthenticationDelay = -1
	}
	return c
}
