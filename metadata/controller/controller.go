package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// Kafka's defaults.
const (
	// DefaultSessionTimeout is broker.session.timeout.ms.
	DefaultSessionTimeout = 9 * time.Second
	// DefaultNoOpInterval is metadata.max.idle.interval.ms.
	DefaultNoOpInterval = 500 * time.Millisecond
	// DefaultUncleanElectionInterval is unclean.leader.election.interval.ms.
	DefaultUncleanElectionInterval = 5 * time.Minute
	// DefaultLeaderImbalanceCheckInterval is
	// leader.imbalance.check.interval.seconds.
	DefaultLeaderImbalanceCheckInterval = 5 * time.Minute
	// DefaultMinInsyncReplicas is min.insync.replicas.
	DefaultMinInsyncReplicas = 1
)

// Config configures a QuorumController.
type Config struct {
	// NodeID is the controller node's id; it is active while the metadata
	// quorum's leader is NodeID.
	NodeID int32
	// ClusterID is the cluster's id; brokers registering with another are
	// refused (INCONSISTENT_CLUSTER_ID).
	ClusterID string
	// Raft appends the controller's records.
	Raft Raft
	// SessionTimeout is broker.session.timeout.ms: a broker that has not
	// heartbeated for this long is fenced. 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// NoOpInterval is metadata.max.idle.interval.ms: the active controller
	// writes a NoOpRecord this often (Kafka's writeNoOpRecord periodic
	// task, which runs whatever else was written). 0 means never
	// (negative too).
	NoOpInterval time.Duration
	// DefaultNumPartitions is num.partitions, used by CreateTopics asking
	// for -1 partitions; 0 means 1.
	DefaultNumPartitions int32
	// DefaultReplicationFactor is default.replication.factor, used by
	// CreateTopics asking for -1; 0 means 1.
	DefaultReplicationFactor int16
	// MaxBrokerPartitions is max.broker.partitions (KIP-578): the most
	// partition replicas one broker may host; CreateTopics and
	// CreatePartitions that would place more are refused
	// (POLICY_VIOLATION). 0 means DefaultMaxBrokerPartitions.
	MaxBrokerPartitions int
	// UncleanLeaderElection is unclean.leader.election.enable from the
	// controller's own configuration: the default below a topic's config
	// and the dynamic cluster default (ConfigurationControlManager's
	// getTopicConfig order).
	UncleanLeaderElection bool
	// UncleanElectionInterval is unclean.leader.election.interval.ms: how
	// often the active controller tries unclean elections for leaderless
	// partitions (Kafka's electUnclean periodic task). 0 means
	// DefaultUncleanElectionInterval.
	UncleanElectionInterval time.Duration
	// AutoLeaderRebalance is auto.leader.rebalance.enable (Kafka's
	// default is true): every LeaderImbalanceCheckInterval the active
	// controller makes each partition's preferred replica its leader
	// again where it may lead.
	AutoLeaderRebalance bool
	// LeaderImbalanceCheckInterval is
	// leader.imbalance.check.interval.seconds; 0 means
	// DefaultLeaderImbalanceCheckInterval.
	LeaderImbalanceCheckInterval time.Duration
	// MinInsyncReplicas is min.insync.replicas from the controller's own
	// configuration: the default below a topic's config and the dynamic
	// cluster default, which with ELR on decides when the ISR may shrink
	// into the ELR, and the value of the cluster default the bootstrap
	// writes with ELR on. 0 means DefaultMinInsyncReplicas.
	MinInsyncReplicas int
	// EligibleLeaderReplicasVersion is the level of
	// eligible.leader.replicas.version the controller bootstraps an empty
	// log with, as kafka-storage format's --feature picks it: 1 turns on
	// eligible leader replicas (KIP-966), Kafka 4.4's default; 0 leaves
	// the feature out, as Kafka's format does for level 0.
	EligibleLeaderReplicasVersion int16
	// ReplicaLogInfo, if set, asks a broker about its replica's log, for
	// the recovery election of a partition whose in-sync replicas all lost
	// records (see recovery.go); nil leaves such partitions leaderless.
	ReplicaLogInfo ReplicaLogInfo
	// OnEvent, if set, hears every Event, on the controller's goroutine:
	// it must not block nor call back into the controller's loop.
	OnEvent func(Event)
	// Cluster is the cluster clock the loop ticks on and the recovery
	// queries time out on; nil is the wall clock.
	Cluster *clock.Clock
	// Clock is the time source; nil means Cluster's. Deadlines (sessions,
	// no-ops) are measured on it.
	Clock func() time.Time
	// Logger receives the controller's decisions; nil discards them.
	Logger *slog.Logger
	// Rand, if set, draws topic ids and where replicas go, so that a
	// seeded simulation replays the same cluster; nil draws topic ids from
	// crypto/rand and placements from the global source, as Kafka does.
	Rand *rand.Rand
}

// QuorumController is the metadata quorum's controller (Kafka's
// QuorumController) on one controller node. Its methods are safe from any
// goroutine.
type QuorumController struct {
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	appendTo appendFunc
	// tickEvery is the real-time period at which the loop checks its
	// deadlines.
	tickEvery time.Duration

	box *mailbox
	// manual: no goroutine runs the loop; the caller calls Step (see
	// NewManual).
	manual    bool
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	// queries are the recovery elections' ReplicaLogInfo calls in flight,
	// cancelled and waited for by Close.
	queries     sync.WaitGroup
	queryCtx    context.Context
	cancelQuery context.CancelFunc

	activeEpoch atomic.Int64 // the epoch it is active in, -1 when not
	metrics     atomic.Pointer[Metrics]
	brokerViews atomic.Pointer[[]BrokerHeartbeatState]

	st state // owned by the loop
}

// state is what the loop owns.
type state struct {
	committed *image.MetadataImage
	working   *image.MetadataImage
	leader    raft.LeaderAndEpoch
	active    bool
	epoch     int32
	claimedAt time.Time
	ready     bool
	pending   []*batch
	// nextOffset is the controller's lower bound of the offset its next
	// record will take.
	nextOffset    int64
	nextNoOp      time.Time
	nextFenceScan time.Time
	nextUnclean   time.Time
	nextRecovery  time.Time
	nextRebalance time.Time
	// recovering are the partitions whose recovery election asks its
	// candidates now; recoveryWaits what the ones waiting wait for.
	recovering    map[recoveryKey]bool
	recoveryWaits map[recoveryKey][]int32
	// uncleanElections counts the unclean elections committed since the
	// controller started.
	uncleanElections int64
	// elrElections counts the elections from the ELR committed since the
	// controller started.
	elrElections  int64
	heartbeats    map[int32]*brokerHeartbeat
	timedOut      int64
	lastCommitted int64
	closing       bool
	// counted is the topics image the partition counts are of.
	counted             *image.TopicsImage
	partitions, offline int
}

// New starts a controller; it is inactive until HandleLeaderChange names its
// node the leader.
func New(cfg Config) (*QuorumController, error) {
	if cfg.Raft == nil {
		return nil, errors.New("controller: no Raft to append to")
	}
	if v := cfg.EligibleLeaderReplicasVersion; v < record.EligibleLeaderReplicasOff || v > record.EligibleLeaderReplicasOn {
		return nil, fmt.Errorf("controller: unknown eligible.leader.replicas.version %d (0 or 1)", v)
	}
	return newController(cfg, raftAppender(cfg.Raft))
}

func newController(cfg Config, app appendFunc) (*QuorumController, error) {
	c, err := build(cfg, app)
	if err != nil {
		return nil, err
	}
	go c.run()
	return c, nil
}

// build makes a controller whose loop nobody runs yet.
func build(cfg Config, app appendFunc) (*QuorumController, error) {
	if cfg.NodeID < 0 {
		return nil, fmt.Errorf("controller: invalid node id %d", cfg.NodeID)
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.MaxBrokerPartitions == 0 {
		cfg.MaxBrokerPartitions = DefaultMaxBrokerPartitions
	}
	if cfg.MaxBrokerPartitions < 0 {
		return nil, fmt.Errorf("controller: negative max.broker.partitions %d", cfg.MaxBrokerPartitions)
	}
	if cfg.SessionTimeout < 0 {
		return nil, fmt.Errorf("controller: negative session timeout %v", cfg.SessionTimeout)
	}
	if cfg.UncleanElectionInterval < 0 {
		return nil, fmt.Errorf("controller: negative unclean leader election interval %v", cfg.UncleanElectionInterval)
	}
	if cfg.UncleanElectionInterval == 0 {
		cfg.UncleanElectionInterval = DefaultUncleanElectionInterval
	}
	if cfg.LeaderImbalanceCheckInterval < 0 {
		return nil, fmt.Errorf("controller: negative leader imbalance check interval %v", cfg.LeaderImbalanceCheckInterval)
	}
	if cfg.LeaderImbalanceCheckInterval == 0 {
		cfg.LeaderImbalanceCheckInterval = DefaultLeaderImbalanceCheckInterval
	}
	if cfg.DefaultNumPartitions <= 0 {
		cfg.DefaultNumPartitions = 1
	}
	if cfg.DefaultReplicationFactor <= 0 {
		cfg.DefaultReplicationFactor = 1
	}
	if cfg.Clock == nil {
		cfg.Clock = cfg.Cluster.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &QuorumController{
		cfg:      cfg,
		log:      log.With("controller", cfg.NodeID),
		now:      cfg.Clock,
		appendTo: app,
		box:      newMailbox(),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	c.queryCtx, c.cancelQuery = context.WithCancel(context.Background())
	// Kafka's maybeFenceStaleBroker period: sessionTimeout/8, at least 1 ms.
	c.tickEvery = max(cfg.SessionTimeout/8, time.Millisecond)
	if cfg.NoOpInterval > 0 {
		c.tickEvery = min(c.tickEvery, cfg.NoOpInterval)
	}
	c.tickEvery = min(c.tickEvery, cfg.UncleanElectionInterval)
	if cfg.AutoLeaderRebalance {
		c.tickEvery = min(c.tickEvery, cfg.LeaderImbalanceCheckInterval)
	}
	c.activeEpoch.Store(-1)
	c.st = state{
		committed:     image.Empty,
		working:       image.Empty,
		leader:        raft.LeaderAndEpoch{LeaderID: -1, Epoch: -1},
		heartbeats:    map[int32]*brokerHeartbeat{},
		lastCommitted: -1,
		recovering:    map[recoveryKey]bool{},
		recoveryWaits: map[recoveryKey][]int32{},
	}
	c.publish()
	return c, nil
}

// HandleCommittedImage hands the controller a committed image, whose
// provenance is the last offset it holds. It never blocks.
func (c *QuorumController) HandleCommittedImage(img *image.MetadataImage) {
	if img != nil {
		c.box.postImage(img)
	}
}

// HandleLeaderChange tells the controller who leads the metadata quorum;
// it becomes active when l.LeaderID is its node, having been handed every
// committed image before l.Epoch. It never blocks.
func (c *QuorumController) HandleLeaderChange(l raft.LeaderAndEpoch) {
	c.box.post(func() { c.leaderChanged(l) })
}

// Active reports the epoch the controller is active in, if it is.
func (c *QuorumController) Active() (epoch int32, ok bool) {
	e := c.activeEpoch.Load()
	return int32(e), e >= 0
}

// Close stops the controller's goroutine; requests still waiting are
// answered NOT_CONTROLLER. It is idempotent.
func (c *QuorumController) Close() {
	c.closeOnce.Do(func() {
		close(c.stop)
		c.cancelQuery()
		if c.manual {
			c.stopLoop()
			close(c.done)
		}
	})
	<-c.done
	c.queries.Wait()
}

func (c *QuorumController) run() {
	defer close(c.done)
	t := c.cfg.Cluster.NewTicker(c.tickEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			c.stopLoop()
			return
		case <-c.box.wake:
		case <-t.C:
		}
		c.drain()
	}
}

// stopLoop is the loop's last step: the controller renounces, and what was
// queued runs inactive, so requests hear NOT_CONTROLLER.
func (c *QuorumController) stopLoop() {
	c.st.closing = true
	c.renounce("controller closed")
	for _, ev := range c.box.close() {
		ev()
	}
	c.publish()
}

// drain runs every posted event, then the timers.
func (c *QuorumController) drain() {
	img, evs := c.box.take()
	if img != nil {
		c.committedImage(img)
	}
	for _, ev := range evs {
		ev()
	}
	c.timers()
	c.publish()
}

// recoveryScanInterval is the least time between two scans for
// partitions that need a recovery election.
const recoveryScanInterval = 200 * time.Millisecond

// timers runs what is due: a session scan, unclean and recovery elections
// and an idle no-op.
func (c *QuorumController) timers() {
	if !c.st.active {
		return
	}
	now := c.now()
	if !now.Before(c.st.nextFenceScan) {
		c.st.nextFenceScan = now.Add(c.tickEvery)
		c.maybeFenceStaleBroker(now)
	}
	if !now.Before(c.st.nextUnclean) {
		c.st.nextUnclean = now.Add(c.cfg.UncleanElectionInterval)
		c.maybeElectUncleanLeaders()
	}
	if c.cfg.AutoLeaderRebalance && !now.Before(c.st.nextRebalance) {
		if !c.st.nextRebalance.IsZero() {
			c.maybeBalanceLeaders()
		}
		c.st.nextRebalance = now.Add(c.cfg.LeaderImbalanceCheckInterval)
	}
	if !now.Before(c.st.nextRecovery) {
		c.st.nextRecovery = now.Add(max(c.tickEvery, recoveryScanInterval))
		c.maybeStartRecoveries()
	}
	if c.cfg.NoOpInterval > 0 && !now.Before(c.st.nextNoOp) {
		c.st.nextNoOp = now.Add(c.cfg.NoOpInterval)
		c.writeNoOp()
	}
}

func (c *QuorumController) emit(ev Event) {
	if c.cfg.OnEvent == nil {
		return
	}
	ev.Time = c.now()
	if ev.Epoch == 0 {
		ev.Epoch = c.st.epoch
	}
	c.cfg.OnEvent(ev)
}
