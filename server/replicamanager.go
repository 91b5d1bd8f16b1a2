package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
)

// ReplicaManager is a broker's part that hosts the partition replicas the
// metadata assigns it (Kafka's ReplicaManager): it makes each one leader
// or follower as the image says, feeds followers through the replica
// fetchers, serves Produce, Fetch, ListOffsets and OffsetForLeaderEpoch,
// checkpoints the high watermarks, and asks the active controller for the
// ISR changes its leaders propose. Its methods are safe for concurrent use.
type ReplicaManager struct {
	id          int32
	dir         string
	log         *slog.Logger
	brokerEpoch func() int64
	controller  func() int32
	ctl         *controllerChannel
	peers       *brokerChannel
	fetchers    *fetcher.Manager
	quotas      replicationQuotas
	lagTimeMax  time.Duration
	minInsync   int
	flush       storage.FlushPolicy
	disk        storage.Disk // the partition logs'; nil: the OS's
	// dirID is the broker's log directory (KIP-858).
	dirID   record.Uuid
	onEvent func(ReplicaEvent)
	// assigner tells the controller the directories of damaged and
	// repaired replicas.
	assigner *dirAssigner
	limits   dataLimits
	// clock is the cluster clock: purgatory deadlines, ISR lag, fetcher
	// waits.
	clock *clock.Clock

	// produces holds acks=-1 produces waiting for their high watermarks,
	// fetches the fetches waiting for MinBytes; both keyed by partition.
	produces *partition.Purgatory[*partition.Partition]
	fetches  *partition.Purgatory[*partition.Partition]
	// flusher fsyncs the leaders' appends off the produce path.
	flusher *logFlusher

	// img is the last image the loader published; the manager's goroutine
	// reconciles the hosted partitions with it.
	img atomic.Pointer[image.MetadataImage]
	// applied is the newest image whose partitions the manager hosts as
	// it says: what the broker's Metadata answers from (appliedImage).
	applied appliedImage

	mu     sync.RWMutex
	hosted map[fetcher.TopicPartition]*hostedReplica
	// inflight are the ISR changes sent, or to send again, by partition.
	inflight map[*partition.Partition]partition.Proposal

	changed  chan struct{} // a new image to reconcile
	isrWake  chan struct{} // a follower fetch may allow an ISR change
	deadline chan struct{} // a delayed operation was parked

	// carried are the checkpointed offsets of the last incarnation, for
	// the replicas this one has not opened yet: each checkpoint writes
	// them on, so that a restart before the metadata arrives keeps them.
	// ckMu serialises checkpoints and guards carried.
	ckMu    sync.Mutex
	carried map[fetcher.TopicPartition]checkpointed

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	crash     atomic.Bool
	// closeErr is what closing the partitions met, set once Close ran.
	closeErr error
	// onApplied, if set, runs on the manager's goroutine after each image
	// it applied: the group coordinator learns there which offsets
	// partitions it leads (Kafka's BrokerMetadataPublisher, after
	// ReplicaManager.applyDelta).
	onApplied atomic.Pointer[func(*image.MetadataImage)]

	// registered reports whether an image holds this incarnation's own
	// registration; nil when the broker's metadata needs no such gate.
	registered func(*image.MetadataImage) bool
	// opened is set, on the manager's goroutine, once the registration
	// gate opened (see mayApply); applying once the first image after it
	// is applied. Both stay set.
	opened   bool
	applying atomic.Bool
}

// hostedReplica is one partition replica on this broker and what the
// manager last did with it.
type hostedReplica struct {
	p       *partition.Partition
	topicID record.Uuid
	// fetchingFrom is the leader the replica was added to the fetchers
	// for and its epoch; leader -1 when it is not fetching.
	fetchingFrom, fetchingEpoch int32
	// damage is what the replica's files lost, until it has fetched it
	// back (see damage.go); nil for a sound replica.
	damage atomic.Pointer[partition.Damage]
}

// checkpointed is what the last checkpoints held for one replica.
type checkpointed struct {
	highWatermark, recoveryPoint int64
}

// replicaManagerConfig is what a broker hands its ReplicaManager.
type replicaManagerConfig struct {
	id          int32
	dir         string
	log         *slog.Logger
	brokerEpoch func() int64
	// fetchEpoch is the broker epoch its fetches name; nil is
	// brokerEpoch.
	fetchEpoch func() int64
	controller func() int32
	ctl        *controllerChannel
	client     wire.ClientConfig
	// lagTimeMax is replica.lag.time.max.ms; zero takes the partition's
	// default.
	lagTimeMax time.Duration
	// minInsync is the broker's own min.insync.replicas, below the topic's
	// and the dynamic cluster default; zero takes the partition's default.
	minInsync int
	// fetchers holds the replica fetchers' settings (num.replica.fetchers,
	// replica.fetch.*); the manager fills in who it is and how to send.
	fetchers fetcher.Config
	// flush is the partition logs' flush policy: the node's, so that a
	// Kill loses what it loses from the metadata log.
	flush storage.FlushPolicy
	// disk carries the partition logs' writes and fsyncs: the node's
	// disk, the metadata log's too (nil: the operating system's).
	disk storage.Disk
	// dirID is the broker's log directory id.
	dirID record.Uuid
	// onEvent, if set, receives the replicas' events; it must not block.
	onEvent func(ReplicaEvent)
	// limits bound what one produce or fetch may cost.
	limits dataLimits
	// registered, if set, holds back every image until one holds this
	// incarnation's registration (see mayApply).
	registered func(*image.MetadataImage) bool
}

// dataLimits bound what one request may make the data plane hold.
type dataLimits struct {
	// fetchMaxBytes is fetch.max.bytes: the most one Fetch answer holds
	// (plus one batch), whatever it asks.
	fetchMaxBytes int
	// replicaFetchResponseMaxBytes is replica.fetch.response.max.bytes,
	// which bounds a follower's Fetch answer too.
	replicaFetchResponseMaxBytes int
	// messageMaxBytes is message.max.bytes: the largest batch a producer
	// may append.
	messageMaxBytes int
	// maxPartitions is max.broker.partitions: the most replicas the broker
	// opens, whatever the metadata assigns it (metadata written before
	// the controller's cap, or under a higher one). Each holds files.
	maxPartitions int
}

// Kafka's defaults of the limits.
const (
	// DefaultFetchMaxBytes is fetch.max.bytes' default, 55 MiB.
	DefaultFetchMaxBytes = 55 << 20
)

func (l dataLimits) withDefaults() dataLimits {
	if l.fetchMaxBytes <= 0 {
		l.fetchMaxBytes = DefaultFetchMaxBytes
	}
	if l.replicaFetchResponseMaxBytes <= 0 {
		l.replicaFetchResponseMaxBytes = fetcher.DefaultReplicaFetchResponseMaxBytes
	}
	if l.messageMaxBytes <= 0 {
		l.messageMaxBytes = partition.DefaultMaxMessageBytes
	}
	if l.maxPartitions <= 0 {
		l.maxPartitions = controller.DefaultMaxBrokerPartitions
	}
	return l
}

// newReplicaManager starts a broker's ReplicaManager with no partitions.
func newReplicaManager(cfg replicaManagerConfig) (*ReplicaManager, error) {
	if cfg.lagTimeMax <= 0 {
		cfg.lagTimeMax = partition.DefaultReplicaLagTimeMax
	}
	rm := &ReplicaManager{
		id: cfg.id, dir: cfg.dir, log: cfg.log.With("part", "replica-manager"),
		brokerEpoch: cfg.brokerEpoch, controller: cfg.controller, ctl: cfg.ctl,
		lagTimeMax: cfg.lagTimeMax, minInsync: cfg.minInsync, flush: cfg.flush, disk: cfg.disk,
		dirID: cfg.dirID, onEvent: cfg.onEvent, clock: cfg.client.Clock,
		limits:   cfg.limits.withDefaults(),
		produces: partition.NewPurgatory[*partition.Partition](),
		fetches:  partition.NewPurgatory[*partition.Partition](),
		hosted:   map[fetcher.TopicPartition]*hostedReplica{},
		inflight: map[*partition.Partition]partition.Proposal{},
		changed:  make(chan struct{}, 1),
		isrWake:  make(chan struct{}, 1),
		deadline: make(chan struct{}, 1),
		quotas:   newReplicationQuotas(),

		registered: cfg.registered,
	}
	rm.opened = cfg.registered == nil
	rm.applying.Store(rm.opened)
	rm.flusher = newLogFlusher(rm)
	rm.assigner = newDirAssigner(rm)
	rm.img.Store(image.Empty)
	rm.applied.img = image.Empty
	rm.carried = rm.readCheckpoints()
	rm.peers = newBrokerChannel(cfg.client, rm.brokerAddr)
	fc := cfg.fetchers
	fc.BrokerID, fc.BrokerEpoch, fc.Send, fc.Logger = cfg.id, cfg.brokerEpoch, rm.peers.send, rm.log
	if cfg.fetchEpoch != nil {
		fc.BrokerEpoch = cfg.fetchEpoch
	}
	fc.Quota = rm.quotas.follower
	fc.Clock = rm.clock
	m, err := fetcher.NewManager(fc)
	if err != nil {
		return nil, fmt.Errorf("replica fetchers: %w", err)
	}
	rm.fetchers = m
	rm.ctx, rm.cancel = context.WithCancel(context.Background())
	rm.wg.Add(4)
	go rm.runMetadata()
	go rm.runExpiry()
	go rm.runISR()
	go rm.assigner.run()
	return rm, nil
}

// publisher is the loader publisher that hands every image to the
// manager's goroutine; it never blocks the raft loop. An image whose
// delta changed no topic and no config is not reconciled: no replica can
// change. While the registration gate is shut every image is, as the
// one that opens it may change only the cluster.
func (rm *ReplicaManager) publisher() loader.Publisher {
	return loader.PublisherFuncs{Update: func(delta *image.MetadataDelta, img *image.MetadataImage, _ loader.Manifest) {
		reconcile := !rm.applying.Load() || delta == nil || delta.TopicsDelta() != nil || delta.ConfigurationsDelta() != nil
		rm.applied.published(img, reconcile, func() { rm.img.Store(img) })
		if reconcile {
			signal(rm.changed)
		}
	}}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// brokerAddr is the PLAINTEXT listener of broker id in the last image.
func (rm *ReplicaManager) brokerAddr(id int32) (string, bool) {
	return brokerListener(rm.img.Load(), id)
}

// highWatermarkCheckpointInterval is
// replica.high.watermark.checkpoint.interval.ms, Kafka's 5 s.
const highWatermarkCheckpointInterval = 5 * time.Second

// runMetadata reconciles the hosted partitions with each new image, on
// the manager's own goroutine because opening a log is file I/O, and
// checkpoints the high watermarks. Images that arrive while one is
// applied are skipped to the newest: the reconciliation compares with the
// whole image, so nothing is missed.
func (rm *ReplicaManager) runMetadata() {
	defer rm.wg.Done()
	tick := rm.clock.NewTicker(highWatermarkCheckpointInterval)
	defer tick.Stop()
	for {
		select {
		case <-rm.ctx.Done():
			return
		case <-rm.changed:
			img := rm.img.Load()
			if !rm.mayApply(img) {
				continue
			}
			rm.applyImage(img, rm.clock.Now())
			if f := rm.onApplied.Load(); f != nil {
				(*f)(img)
			}
			newest := rm.applied.reconciled(img, rm.img.Load)
			rm.applying.Store(true)
			if !newest {
				// A newer image came while this one was applied.
				signal(rm.changed)
			}
		case <-tick.C:
			rm.checkpoint()
		}
	}
}

// mayApply is the registration gate: a broker's manager applies no
// image until one holds this incarnation's own registration, and applies
// every image after that. A broker killed and started again while the
// controller still counts its previous incarnation's session is refused
// registration until that session expires, and the controller then fences
// the previous incarnation and moves its leaderships away. The images
// before that still name the previous incarnation leader in its leader
// epoch; applied, they would make this one lead in that epoch with a log
// the kill may have cut short, and append at offsets a follower holds
// other records at, a divergence no epoch check sees. Kafka 3.0-3.4's
// broker published no metadata to its ReplicaManager before its
// lifecycle's initial catch-up; later ones apply it but serve no request
// until then.
func (rm *ReplicaManager) mayApply(img *image.MetadataImage) bool {
	if rm.opened {
		return true
	}
	if !rm.registered(img) {
		return false
	}
	rm.opened = true
	rm.log.Info("applying metadata: it holds this incarnation's registration", "offset", img.Provenance().LastContainedOffset)
	return true
}

// Applying reports whether the manager applies the metadata: false until
// it applied the first image past the registration gate (see mayApply).
func (rm *ReplicaManager) Applying() bool { return rm.applying.Load() }

// applyImage makes the hosted partitions what img assigns this broker
// (Kafka's ReplicaManager.applyDelta with becomeLeader and becomeFollower).
func (rm *ReplicaManager) applyImage(img *image.MetadataImage, now time.Time) {
	rm.applyQuotaConfigs(img)
	want := map[fetcher.TopicPartition]bool{}
	toFetch := map[fetcher.TopicPartition]fetcher.InitialFetchState{}
	var stopFetch []fetcher.TopicPartition
	var touched []*partition.Partition
	for topicID, topic := range img.Topics().Topics() {
		for idx, reg := range topic.Partitions() {
			if !reg.HasReplica(rm.id) {
				continue
			}
			tp := fetcher.TopicPartition{Topic: topic.Name(), Partition: idx}
			want[tp] = true
			h, err := rm.open(tp, topicID)
			if err != nil {
				rm.log.Error("cannot host partition", "partition", tp, "err", err)
				continue
			}
			if n := minInsyncReplicas(img, tp.Topic, rm.minInsync); n != h.p.MinInsyncReplicas() {
				// A config change: Kafka's Partition takes it at once.
				if err := h.p.SetMinInsyncReplicas(n); err == nil {
					rm.log.Info("min.insync.replicas changed", "partition", tp, "minInsyncReplicas", n)
					touched = append(touched, h.p)
				}
			}
			st := h.p.State()
			if reg.Leader == rm.id && !rm.mayLead(tp, h, reg) {
				if h.fetchingFrom >= 0 {
					stopFetch = append(stopFetch, tp)
					h.fetchingFrom, h.fetchingEpoch = -1, -1
				}
				continue
			}
			if reg.Leader == rm.id {
				if st.Role != partition.RoleLeader || st.LeaderEpoch != reg.LeaderEpoch || st.PartitionEpoch < reg.PartitionEpoch {
					if _, err := h.p.MakeLeader(reg.LeaderEpoch, reg.PartitionEpoch, reg.Replicas, reg.Isr, now); err != nil {
						rm.log.Warn("make leader", "partition", tp, "err", err)
						continue
					}
					rm.log.Info("leading", "partition", tp, "leaderEpoch", reg.LeaderEpoch)
					touched = append(touched, h.p)
					if h.p.FlushDeferred() && h.p.NeedsFlush() {
						// A tail it fetched as a follower and had not
						// flushed counts once it is durable.
						rm.flusher.request(h.p)
					}
				}
				if h.fetchingFrom >= 0 {
					stopFetch = append(stopFetch, tp)
					h.fetchingFrom, h.fetchingEpoch = -1, -1
				}
				continue
			}
			if st.Role != partition.RoleFollower || st.LeaderEpoch != reg.LeaderEpoch || st.PartitionEpoch < reg.PartitionEpoch || st.LeaderID != reg.Leader {
				if _, err := h.p.MakeFollower(reg.Leader, reg.LeaderEpoch, reg.PartitionEpoch, reg.Replicas, reg.Isr); err != nil {
					rm.log.Warn("make follower", "partition", tp, "err", err)
					continue
				}
				touched = append(touched, h.p)
			}
			switch {
			case reg.Leader < 0:
				if h.fetchingFrom >= 0 {
					stopFetch = append(stopFetch, tp)
					h.fetchingFrom, h.fetchingEpoch = -1, -1
				}
			case h.fetchingFrom != reg.Leader || h.fetchingEpoch != reg.LeaderEpoch:
				toFetch[tp] = fetcher.InitialFetchState{
					Leader: reg.Leader, LeaderEpoch: reg.LeaderEpoch, TopicID: topicID,
					Replica: fetchedReplica{h.p, rm, tp}, InitOffset: -1,
				}
				h.fetchingFrom, h.fetchingEpoch = reg.Leader, reg.LeaderEpoch
			}
		}
	}
	var removed []*hostedReplica
	rm.mu.Lock()
	for tp, h := range rm.hosted {
		if !want[tp] {
			removed = append(removed, h)
			delete(rm.hosted, tp)
			delete(rm.inflight, h.p)
			stopFetch = append(stopFetch, tp)
			rm.assigner.forget(h.topicID, tp.Partition)
		}
	}
	rm.mu.Unlock()
	if len(stopFetch) > 0 {
		rm.fetchers.RemovePartitions(stopFetch...)
	}
	if len(toFetch) > 0 {
		rm.fetchers.AddPartitions(toFetch)
	}
	// A replica that stopped leading answers its waiting produces and
	// fetches at once (NOT_LEADER_OR_FOLLOWER, or a new epoch to see).
	for _, p := range touched {
		rm.produces.CheckAndComplete(p)
		rm.fetches.CheckAndComplete(p)
	}
	if len(removed) > 0 {
		// Out of the checkpoints before the files go, so that a crash
		// between the two does not take a replica made anew for a
		// damaged one.
		rm.checkpoint()
	}
	for _, h := range removed {
		rm.log.Info("deleting partition", "partition", h.p.Name())
		if err := h.p.Delete(); err != nil {
			rm.log.Error("delete partition", "partition", h.p.Name(), "err", err)
		}
	}
}

// setOnApplied sets the function that runs after each applied image, and
// runs it on the image applied so far.
func (rm *ReplicaManager) setOnApplied(f func(*image.MetadataImage)) {
	rm.onApplied.Store(&f)
	signal(rm.changed)
}

// open returns the hosted replica of tp, opening or creating its log. A
// replica left from a deleted topic of the same name is deleted first.
func (rm *ReplicaManager) open(tp fetcher.TopicPartition, topicID record.Uuid) (*hostedReplica, error) {
	rm.mu.RLock()
	h, hosted := rm.hosted[tp], len(rm.hosted)
	rm.mu.RUnlock()
	if h != nil && h.topicID == topicID {
		return h, nil
	}
	if h == nil && hosted >= rm.limits.maxPartitions {
		return nil, fmt.Errorf("the broker already hosts %d replicas, its max.broker.partitions", hosted)
	}
	if partition.DirName(tp.Topic, tp.Partition) == quorum.LogDirName {
		// Kafka's controller refuses the name; this one does not, and the
		// directory is the metadata log's.
		return nil, fmt.Errorf("partition %s would share the metadata log's directory", tp)
	}
	if h != nil {
		rm.fetchers.RemovePartitions(tp)
		rm.mu.Lock()
		delete(rm.hosted, tp)
		delete(rm.inflight, h.p)
		rm.mu.Unlock()
		rm.assigner.forget(h.topicID, tp.Partition)
		rm.checkpoint()
		if err := h.p.Delete(); err != nil {
			return nil, fmt.Errorf("delete the replica of the old topic: %w", err)
		}
	}
	last := rm.takeCarried(tp)
	p, err := partition.New(partition.Config{
		Topic: tp.Topic, TopicID: topicID, Partition: tp.Partition,
		Dir: rm.dir, LocalBrokerID: rm.id,
		Log:               storage.Options{FlushPolicy: rm.flush, Disk: rm.disk},
		MinInsyncReplicas: minInsyncReplicas(rm.img.Load(), tp.Topic, rm.minInsync),
		MaxMessageBytes:   rm.limits.messageMaxBytes,
		ReplicaLagTimeMax: rm.lagTimeMax,
		Now:               rm.clock.Now,
		ReplicaEligible:   func(id int32) bool { return rm.isrEligible(tp, id) },
		AliveBrokerEpoch:  rm.aliveBrokerEpoch,
		HighWatermark:     last.highWatermark,
		RecoveryPoint:     last.recoveryPoint,
	})
	if err != nil {
		return nil, err
	}
	h = &hostedReplica{p: p, topicID: topicID, fetchingFrom: -1, fetchingEpoch: -1}
	rm.noteDamage(tp, h)
	rm.mu.Lock()
	rm.hosted[tp] = h
	rm.mu.Unlock()
	return h, nil
}

// minInsyncReplicas is the topic's min.insync.replicas, else the dynamic
// cluster default, else the broker's own (static) one: Kafka's order.
// Each image is checked against the open replicas, so a change applies at
// once. A value that is not a positive number is skipped, as the
// controller refuses it.
func minInsyncReplicas(img *image.MetadataImage, topic string, static int) int {
	for _, res := range []image.ConfigResource{{Type: record.ResourceTopic, Name: topic}, {Type: record.ResourceBroker}} {
		c := img.Configs().Resource(res)
		if c == nil {
			continue
		}
		if v, ok := c.Get("min.insync.replicas"); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	if static <= 0 {
		return partition.DefaultMinInsyncReplicas
	}
	return static
}

// isrEligible is Kafka's isReplicaIsrEligible — a broker registered,
// unfenced and not shutting down may join an ISR — and, beyond Kafka,
// its replica of tp must be in a directory it has online: a damaged
// replica joins once it has fetched back what it lost.
func (rm *ReplicaManager) isrEligible(tp fetcher.TopicPartition, id int32) bool {
	img := rm.img.Load()
	b := img.Cluster().Broker(id)
	if b == nil || b.Fenced || b.InControlledShutdown {
		return false
	}
	t := img.Topics().TopicByName(tp.Topic)
	if t == nil {
		return false
	}
	reg := t.Partition(tp.Partition)
	return reg != nil && reg.ReplicaOnline(id, b)
}

// aliveBrokerEpoch is Kafka's getAliveBrokerEpoch: the epoch of broker id
// if its metadata registers it unfenced.
func (rm *ReplicaManager) aliveBrokerEpoch(id int32) (int64, bool) {
	b := rm.img.Load().Cluster().Broker(id)
	if b == nil || b.Fenced {
		return 0, false
	}
	return b.Epoch, true
}

// partitionByName is the hosted replica of topic's partition, or nil.
func (rm *ReplicaManager) partitionByName(topic string, idx int32) *partition.Partition {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	if h := rm.hosted[fetcher.TopicPartition{Topic: topic, Partition: idx}]; h != nil {
		return h.p
	}
	return nil
}

// runExpiry answers the delayed produces and fetches whose time is up.
func (rm *ReplicaManager) runExpiry() {
	defer rm.wg.Done()
	t := rm.clock.NewTimer(time.Hour)
	defer t.Stop()
	for {
		next := rm.clock.Now().Add(time.Hour)
		if d, ok := rm.produces.NextDeadline(); ok && d.Before(next) {
			next = d
		}
		if d, ok := rm.fetches.NextDeadline(); ok && d.Before(next) {
			next = d
		}
		t.Reset(rm.clock.Until(next))
		select {
		case <-rm.ctx.Done():
			return
		case <-rm.deadline:
		case now := <-t.C:
			rm.produces.Expire(now)
			rm.fetches.Expire(now)
		}
	}
}

// watch parks op in purgatory until it completes or deadline, and tells
// the expiry goroutine of the new deadline.
func (rm *ReplicaManager) watch(pg *partition.Purgatory[*partition.Partition], op partition.DelayedOperation, deadline time.Time, keys []*partition.Partition) {
	if !pg.TryCompleteElseWatch(op, deadline, keys...) {
		signal(rm.deadline)
	}
}

// Close stops the fetchers and the manager's goroutines, answers what
// waits in purgatory, and closes every log (flushing it, or as a crash
// after Kill).
func (rm *ReplicaManager) Close() {
	rm.closeOnce.Do(func() {
		rm.cancel()
		rm.wg.Wait()
		rm.fetchers.Close()
		rm.flusher.close()
		rm.peers.close()
		if !rm.crash.Load() {
			rm.checkpoint()
		}
		far := rm.clock.Now().Add(24 * time.Hour)
		rm.produces.Expire(far)
		rm.fetches.Expire(far)
		rm.mu.Lock()
		hosted := rm.hosted
		rm.hosted = map[fetcher.TopicPartition]*hostedReplica{}
		rm.mu.Unlock()
		var errs []error
		for _, h := range hosted {
			if rm.crash.Load() {
				errs = append(errs, h.p.Crash())
			} else {
				errs = append(errs, h.p.Close())
			}
		}
		if err := errors.Join(errs...); err != nil {
			rm.closeErr = err
			rm.log.Error("closing partitions", "err", err)
		}
	})
}

// closedCleanly closes the manager and reports whether every log was
// flushed and closed.
func (rm *ReplicaManager) closedCleanly() bool {
	rm.Close()
	return rm.closeErr == nil && !rm.crash.Load()
}

// kill closes the manager as a crash: what the logs had not flushed is
// lost.
func (rm *ReplicaManager) kill() {
	rm.crash.Store(true)
	rm.Close()
}

// ReplicaStats is one hosted replica, for views.
type ReplicaStats struct {
	Topic          string
	Partition      int32
	Role           partition.Role
	LeaderID       int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
	// Followers is what a leader knows of its other replicas.
	Followers []partition.FollowerState
	// Damage is what the replica's files had lost when it opened, nil if
	// nothing; Repaired says it has fetched that back (or leads what it
	// has, no intact replica being left).
	Damage   *partition.Damage
	Repaired bool
}

// ReplicaManagerStats is a snapshot of a broker's replicas and replica
// fetchers, for views.
type ReplicaManagerStats struct {
	// Partitions are the hosted replicas by topic and partition.
	Partitions []ReplicaStats
	// Fetchers are the replica fetcher threads and their partitions.
	Fetchers fetcher.ManagerStats
	// DelayedProduces and DelayedFetches count the requests waiting in
	// purgatory.
	DelayedProduces, DelayedFetches int
	// LeaderThrottledBytesPerSec and FollowerThrottledBytesPerSec are the
	// measured rates of throttled replication (sent as leader, fetched as
	// follower) that the replication quotas bound (Kafka's byte-rate of
	// the LeaderReplication and FollowerReplication quota types).
	LeaderThrottledBytesPerSec, FollowerThrottledBytesPerSec float64
}

// Stats is a snapshot of the hosted replicas and the fetchers.
func (rm *ReplicaManager) Stats() ReplicaManagerStats {
	rm.mu.RLock()
	hs := make([]*hostedReplica, 0, len(rm.hosted))
	for _, h := range rm.hosted {
		hs = append(hs, h)
	}
	rm.mu.RUnlock()
	now := rm.clock.Now()
	out := ReplicaManagerStats{Fetchers: rm.fetchers.Stats(), DelayedProduces: rm.produces.Len(), DelayedFetches: rm.fetches.Len(),
		LeaderThrottledBytesPerSec: rm.quotas.leader.Rate(now), FollowerThrottledBytesPerSec: rm.quotas.follower.Rate(now)}
	for _, h := range hs {
		p := h.p
		st := p.State()
		rs := ReplicaStats{
			Topic: p.Topic(), Partition: p.Index(), Role: st.Role, LeaderID: st.LeaderID,
			LeaderEpoch: st.LeaderEpoch, PartitionEpoch: st.PartitionEpoch,
			Replicas: st.Replicas, ISR: st.ISR, HighWatermark: st.HighWatermark,
			LogStartOffset: st.LogStartOffset, LogEndOffset: st.LogEndOffset,
			Followers: st.Followers,
		}
		if d, ok := p.Damage(); ok {
			rs.Damage, rs.Repaired = &d, h.damage.Load() == nil
		}
		out.Partitions = append(out.Partitions, rs)
	}
	slices.SortFunc(out.Partitions, func(a, b ReplicaStats) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	return out
}
