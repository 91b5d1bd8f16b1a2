package server

import (
	"log/slog"

	"github.com/kraftlab/kraftlab/internal/clock"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/metadata/zkcontroller"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// Config configures a Server.
type Config struct {
	// Kind says which parts the server has.
	Kind Kind
	// Raft configures the server's raft client: the node's id, the
	// voters, its folder, how it reaches its peers. A controller must be
	// one of Raft.Raft.Voters and a broker must not, unless the quorum is
	// dynamic (no static voters: kraft.version 1), where a controller
	// votes once the voter set in the log names it. Raft.Secret, the
	// playground's member secret (LoadSecret), is required: the listener
	// serves the quorum's RPCs only to connections that authenticate with
	// it, and the node's clients authenticate with it. NodeConfig fills
	// its timing and flush policy from Settings. Raft.Disk is the node's
	// disk: a broker's partition logs are written through it too.
	Raft quorum.Config
	// ZooKeeper, if set, makes the node a broker of the ZooKeeper era
	// (ZkBrokerServer): no raft client, its metadata pushed by the
	// controller it elects through ZooKeeper. Kind must be Broker.
	ZooKeeper *ZooKeeperConfig
	// Addr is the address to listen on; empty means 127.0.0.1 on a port
	// the system picks. A restarted server listens on the address it got
	// the first time, so its peers find it again.
	Addr string
	// Settings are the node's settings by Kafka key for its parts (the
	// quorum controller, the lifecycle manager, the ReplicaManager and its
	// fetchers); a zero value takes the owning part's default.
	Settings Settings
	// Publishers, if set, returns the parts that subscribe to the metadata
	// loader of one incarnation (the quorum controller on a controller,
	// the lifecycle manager on a broker). It is called at each start,
	// before the new loader is handed any record, so the parts see every
	// image from the first.
	Publishers func() []loader.Publisher
	// OnLoaderEvent, if set, receives the loader's events from its own
	// goroutine; it must not block.
	OnLoaderEvent func(loader.Event)
	// OnControllerEvent, if set, receives a controller's quorum
	// controller events, from its goroutine; it must not block.
	OnControllerEvent func(controller.Event)
	// OnZkControllerEvent, if set, receives a ZooKeeper-era broker's
	// controller events, from its event loop; it must not block.
	OnZkControllerEvent func(zkcontroller.Event)
	// OnLifecycleEvent, if set, receives a broker's lifecycle events, from
	// its goroutine; it must not block.
	OnLifecycleEvent func(LifecycleEvent)
	// OnReplicaEvent, if set, receives a broker's news of damaged,
	// repaired and truncated replicas; it must not block.
	OnReplicaEvent func(ReplicaEvent)
	// OnRestart, if set, hears that the node started again by itself
	// after it stopped on a disk fault (see Restarting), with what the
	// restarts did; it is called from the restarts' goroutine and must
	// not block.
	OnRestart func(RestartStatus)
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Clock is the playground's cluster clock: every timer of the node
	// (raft's, the data plane's long polls and ISR lag, heartbeats and
	// sessions, the controller's periodic tasks, retries and request
	// timeouts) reads it. Nil takes Raft.Clock, and nil there the wall
	// clock.
	Clock *clock.Clock
}

// listenerBounds are the bounds of what peers and clients may make the
// node's listener hold, from its settings (a zero takes the listener's
// default; see NodeConfig for Kafka's zeros): a broker reads requests up
// to socket.request.max.bytes, a controller up to its own cap.
func (c Config) listenerBounds() wire.ServerConfig {
	st := c.Settings
	maxFrame := st.SocketRequestMaxBytes
	if c.Kind == Controller {
		maxFrame = st.ControllerSocketRequestMaxBytes
	}
	return wire.ServerConfig{
		MaxFrameSize:              int32(maxFrame),
		QueuedMaxRequestBytes:     st.QueuedMaxRequestBytes,
		MaxConnections:            int(st.MaxConnections),
		MaxConnectionsPerIP:       int(st.MaxConnectionsPerIP),
		IdleTimeout:               st.ConnectionsMaxIdle,
		FailedAuthenticationDelay: st.FailedAuthenticationDelay,
		SaslMaxReceiveSize:        int32(st.SaslServerMaxReceiveSize),
		AuthenticationTimeout:     st.SaslAuthenticationTimeout,
	}
}
