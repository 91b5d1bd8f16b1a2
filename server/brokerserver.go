package server

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/kraftlab/kraftlab/metadata/cache"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server/group"
)

// listenerName is the name brokers register their listener under and
// answer Metadata for, Kafka's default.
const listenerName = "PLAINTEXT"

// BrokerServer is what only a broker runs, for one incarnation (Kafka's
// BrokerServer): the forwarder to the controllers, the metadata cache
// that answers Metadata and DescribeCluster, the ReplicaManager with its
// partitions and replica fetchers, the producer id manager, and the
// lifecycle manager that registers and heartbeats once the listener has
// its address. Its raft client, an observer of the metadata quorum, is
// the node's, shared; under push replication the broker's listener
// serves it the leader's pushes.
type BrokerServer struct {
	s        *Server
	fwd      *forwarder
	replicas *ReplicaManager
	pids     *producerIDManager
	groups   *group.Coordinator
	// creatingOffsets says a CreateTopics of __consumer_offsets is on its
	// way to the controller.
	creatingOffsets atomic.Bool
	// lifecycle is set once the listener opened.
	lifecycle atomic.Pointer[LifecycleManager]
	// previousEpoch is the broker epoch the last incarnation shut down
	// cleanly with, -1 if it did not.
	previousEpoch int64
}

// newBrokerServer makes a broker's parts for a new incarnation and
// registers their APIs on mux.
func newBrokerServer(s *Server, mux *wire.Mux) (*BrokerServer, error) {
	prev, err := takeCleanShutdown(s.cfg.Raft.Dir)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	// Under push replication the leader pushes the metadata log to the
	// broker's raft client, an observer: it serves what is pushed.
	if err := s.raft.Register(mux); err != nil {
		return nil, err
	}
	b := &BrokerServer{s: s, fwd: newForwarder(s), previousEpoch: prev}
	if err := b.fwd.register(mux); err != nil {
		return nil, err
	}
	if err := cache.Register(mux, s.servedImage, s.cfg.Raft.Raft.ClusterID, s.id, listenerName); err != nil {
		b.fwd.close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	deps := brokerDeps{
		ch: b.fwd.ch,
		brokerEpoch: func() int64 {
			if lm := b.Lifecycle(); lm != nil {
				return lm.BrokerEpoch()
			}
			return -1
		},
		controller: func() int32 { return s.raft.Status().LeaderID },
		registered: func(img *image.MetadataImage) bool {
			lm := b.Lifecycle()
			reg := img.Cluster().Broker(s.id)
			return lm != nil && reg != nil && reg.IncarnationID == lm.IncarnationID()
		},
	}
	deps.fetchEpoch = deps.brokerEpoch
	if b.replicas, err = s.newReplicaManager(mux, deps); err != nil {
		b.fwd.close()
		return nil, err
	}
	s.publishers = append(s.publishers, b.replicas.publisher())
	if b.pids, err = s.newProducerIDManager(mux, deps); err != nil {
		b.replicas.Close()
		b.fwd.close()
		return nil, err
	}
	b.groups = s.newGroupCoordinator(b.replicas)
	if err := b.registerGroups(mux); err != nil {
		b.groups.Close()
		b.pids.close()
		b.replicas.Close()
		b.fwd.close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	return b, nil
}

// registerGroups serves FindCoordinator and the group coordinator's APIs
// on mux.
func (b *BrokerServer) registerGroups(mux *wire.Mux) error {
	if err := mux.Handle(findCoordinatorVersions, wire.HandlerFunc(b.handleFindCoordinator)); err != nil {
		return err
	}
	return b.groups.Register(mux)
}

// GroupCoordinator is the incarnation's group coordinator.
func (b *BrokerServer) GroupCoordinator() *group.Coordinator { return b.groups }

// ReplicaManager is the incarnation's ReplicaManager.
func (b *BrokerServer) ReplicaManager() *ReplicaManager { return b.replicas }

// Lifecycle is the incarnation's lifecycle manager, nil until the
// listener opened.
func (b *BrokerServer) Lifecycle() *LifecycleManager { return b.lifecycle.Load() }

// listening starts the lifecycle manager: the registration carries the
// listener's port.
func (b *BrokerServer) listening() error {
	s := b.s
	cfg, err := brokerLifecycleConfig(s, b.fwd.ch, s.appliedOffset)
	if err != nil {
		return err
	}
	dir, err := directoryID(s.cfg.Raft.Dir, s.cfg.Raft.Raft.ClusterID, s.id)
	if err != nil {
		return fmt.Errorf("node %d: %w", s.id, err)
	}
	cfg.LogDirs = []record.Uuid{dir}
	cfg.PreviousBrokerEpoch = b.previousEpoch
	cfg.HeartbeatInterval = s.cfg.Settings.BrokerHeartbeatInterval
	cfg.OnEvent = s.cfg.OnLifecycleEvent
	lm, err := NewLifecycleManager(cfg)
	if err != nil {
		return fmt.Errorf("node %d: %w", s.id, err)
	}
	lm.Start()
	b.lifecycle.Store(lm)
	return nil
}

// shutdown is Kafka's controlled shutdown: the controller moves the
// broker's leaderships away before it goes.
func (b *BrokerServer) shutdown(ctx context.Context) error {
	if lm := b.Lifecycle(); lm != nil {
		return lm.Shutdown(ctx)
	}
	return nil
}

// stopped closes the ReplicaManager, not only once the raft client's end
// is noticed, so that the logs are flushed and closed when Stop returns;
// then it marks the shutdown clean with the broker epoch, as Kafka's
// LogManager.shutdown does.
func (b *BrokerServer) stopped() {
	b.groups.Close()
	if !b.replicas.closedCleanly() {
		return
	}
	epoch := int64(-1)
	if lm := b.Lifecycle(); lm != nil {
		epoch = lm.BrokerEpoch()
	}
	if err := writeCleanShutdown(b.s.cfg.Raft.Dir, epoch); err != nil {
		b.s.log.Error("cannot mark the shutdown clean", "err", err)
	}
}

// kill closes the ReplicaManager as a crash: what the logs had not
// flushed is lost.
func (b *BrokerServer) kill() {
	b.groups.Close()
	b.replicas.kill()
}

func (b *BrokerServer) close() {
	if lm := b.Lifecycle(); lm != nil {
		lm.Close()
	}
	b.groups.Close()
	b.replicas.Close()
	b.pids.close()
	b.fwd.close()
}

// brokerDeps are what a broker's data plane needs of the node, whichever
// its metadata source: the channel to the active controller and who that
// is, and the broker epoch it sends (fetchEpoch in its fetches).
type brokerDeps struct {
	ch                      *controllerChannel
	brokerEpoch, fetchEpoch func() int64
	controller              func() int32
	// fetchVersion and listOffsetsVersion are the fetchers' request
	// versions; 0 is the fetcher's default, a 4.x broker's.
	fetchVersion, listOffsetsVersion int16
	// registered, if set, is the ReplicaManager's registration gate: an
	// image holds this incarnation's registration.
	registered func(*image.MetadataImage) bool
}

// newReplicaManager makes the incarnation's ReplicaManager: its
// partitions live in the node's folder, its fetchers reach the other
// brokers as members through the playground's links, and it asks the
// active controller for ISR changes through deps' channel. The caller
// hands it its metadata (its publisher).
func (s *Server) newReplicaManager(mux *wire.Mux, deps brokerDeps) (*ReplicaManager, error) {
	ch := deps.ch
	dir, err := directoryID(s.cfg.Raft.Dir, s.cfg.Raft.Raft.ClusterID, s.id)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	st := s.cfg.Settings
	rm, err := newReplicaManager(replicaManagerConfig{
		id:          s.id,
		dir:         s.cfg.Raft.Dir,
		dirID:       dir,
		onEvent:     s.cfg.OnReplicaEvent,
		log:         s.log,
		brokerEpoch: deps.brokerEpoch,
		fetchEpoch:  deps.fetchEpoch,
		controller:  deps.controller,
		ctl:         ch,
		client:      ch.cfg,
		lagTimeMax:  st.ReplicaLagTimeMax,
		minInsync:   int(st.MinInsyncReplicas),
		fetchers: fetcher.Config{
			FetchVersion:          deps.fetchVersion,
			ListOffsetsVersion:    deps.listOffsetsVersion,
			NumReplicaFetchers:    int(st.NumReplicaFetchers),
			FetchWaitMax:          st.ReplicaFetchWaitMax,
			FetchMinBytes:         int32(st.ReplicaFetchMinBytes),
			FetchMaxBytes:         int32(st.ReplicaFetchMaxBytes),
			FetchResponseMaxBytes: int32(st.ReplicaFetchResponseMaxBytes),
			FetchBackoff:          st.ReplicaFetchBackoff,
		},
		flush: s.cfg.Raft.Flush,
		disk:  s.cfg.Raft.Disk,
		limits: dataLimits{
			fetchMaxBytes:                int(st.FetchMaxBytes),
			replicaFetchResponseMaxBytes: int(st.ReplicaFetchResponseMaxBytes),
			messageMaxBytes:              int(st.MessageMaxBytes),
			maxPartitions:                int(st.MaxBrokerPartitions),
		},
		registered: deps.registered,
	})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	if err := rm.register(mux); err != nil {
		rm.Close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	return rm, nil
}
