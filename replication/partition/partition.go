package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// Role is what a replica currently is for its partition.
type Role int8

// Roles.
const (
	// RoleNone: neither leader nor follower yet (or any more).
	RoleNone Role = iota
	// RoleLeader: the replica serves produce and fetch.
	RoleLeader
	// RoleFollower: the replica fetches from the leader.
	RoleFollower
)

// String returns "none", "leader" or "follower".
func (r Role) String() string {
	switch r {
	case RoleLeader:
		return "leader"
	case RoleFollower:
		return "follower"
	}
	return "none"
}

// Partition is one replica of a partition; see the package documentation.
type Partition struct {
	cfg  Config
	name string // <topic>-<partition>, for errors

	mu             sync.Mutex
	log            *storage.Log
	role           Role
	leaderID       int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            isrState
	// leaderEpochStart is where this replica's current leader epoch began
	// in its log (Kafka's leaderEpochStartOffsetOpt), -1 unless it leads.
	leaderEpochStart int64
	hwm              int64
	remotes          map[int32]*replicaState
	// producers is the idempotent producers' state as the log holds it.
	producers producerStateManager
	// flush is what makes appends flushed (the log's flush policy).
	flush flushMode
	// tail is the newest batches this leader appended, which fetches
	// read from memory.
	tail storage.Tail
	// damage is what opening the log found lost, if damaged.
	damage  Damage
	damaged bool
}

// DirName is the name of a replica's directory, as Kafka names it.
func DirName(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

// New opens the replica's log in cfg.Dir/<topic>-<partition>, creating it
// (with its partition.metadata) or recovering what a crash left. A
// directory whose partition.metadata names another topic id is refused:
// it belongs to a deleted topic of the same name.
func New(cfg Config) (*Partition, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("partition config: %w", err)
	}
	name := DirName(cfg.Topic, cfg.Partition)
	dir := filepath.Join(cfg.Dir, name)
	opts, flush := logOptions(cfg.Log)
	// A replica can fetch again what a damaged file lost: the damage is
	// set aside and reported, not refused.
	opts.SetAsideDamage = true
	log, err := storage.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open partition %s: %w", name, err)
	}
	id, ok, err := readPartitionMetadata(dir)
	if err == nil && ok && id != cfg.TopicID {
		err = fmt.Errorf("topic id %s in %s, want %s", encodeTopicID(id), metadataFileName, encodeTopicID(cfg.TopicID))
	}
	if err == nil && !ok {
		err = writePartitionMetadata(dir, cfg.TopicID)
	}
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("open partition %s: %w", name, err)
	}
	p := &Partition{
		cfg: cfg, name: name, log: log,
		leaderID: -1, leaderEpoch: -1, partitionEpoch: -1,
		leaderEpochStart: -1,
		remotes:          map[int32]*replicaState{},
		producers:        newProducerStateManager(),
		flush:            flush,
	}
	if err := p.producers.rebuild(log); err != nil {
		log.Close()
		return nil, fmt.Errorf("open partition %s: %w", name, err)
	}
	p.hwm = min(max(cfg.HighWatermark, log.LogStartOffset()), log.LogEndOffset())
	p.damage, p.damaged = findDamage(log.Recovery(), log.LogEndOffset(), cfg.RecoveryPoint)
	return p, nil
}

// Damage reports the records the replica's files lost, found when it
// opened: see Damage. It never changes afterwards.
func (p *Partition) Damage() (Damage, bool) { return p.damage, p.damaged }

// Close closes the log (flushing it).
func (p *Partition) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Close()
}

// Crash closes the log as if the process had died: what the flush policy
// had not made durable is lost (storage.Log.Crash).
func (p *Partition) Crash() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Crash()
}

// Delete closes the log and removes the replica's directory, as when the
// topic is deleted or the replica moves off this broker.
func (p *Partition) Delete() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.log.Close()
	if rerr := os.RemoveAll(p.log.Dir()); rerr != nil {
		return fmt.Errorf("delete partition %s: %w", p.name, rerr)
	}
	return err
}

// Name is the replica's directory name, <topic>-<partition>.
func (p *Partition) Name() string { return p.name }

// Topic is the partition's topic.
func (p *Partition) Topic() string { return p.cfg.Topic }

// TopicID is the topic's id.
func (p *Partition) TopicID() [16]byte { return p.cfg.TopicID }

// Index is the partition's index in its topic.
func (p *Partition) Index() int32 { return p.cfg.Partition }

// Recovery says what opening the log found and repaired.
func (p *Partition) Recovery() storage.RecoveryReport { return p.log.Recovery() }

// Dir is the replica's directory.
func (p *Partition) Dir() string { return p.log.Dir() }

// State is a copy of a replica's state, for views and tests.
type State struct {
	Role           Role
	LeaderID       int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	// ISR is the last committed ISR.
	ISR []int32
	// MaximalISR is the ISR the high watermark waits for: ISR plus a
	// replica whose expansion is in flight.
	MaximalISR []int32
	// Pending is the ISR change in flight, if any.
	Pending        *Proposal
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
	// LastFlushedOffset is the end of what the log has made durable.
	LastFlushedOffset int64
	// LeaderEpochStartOffset is where the current leader epoch began, or -1
	// unless the replica leads.
	LeaderEpochStartOffset int64
	// Followers is what the leader knows of each other replica.
	Followers []FollowerState
}

// FollowerState is what the leader knows of one follower (Kafka's
// ReplicaState).
type FollowerState struct {
	ReplicaID int32
	// LogEndOffset is the fetch offset of the follower's last fetch, or -1
	// before its first in this leader epoch.
	LogEndOffset int64
	// LastCaughtUpTime is the last time the follower was known to hold
	// the leader's log end offset (zero: never in this epoch).
	LastCaughtUpTime time.Time
	// LastFetchTime is when its last fetch arrived.
	LastFetchTime time.Time
}

// State returns a copy of the replica's state.
func (p *Partition) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := State{
		Role: p.role, LeaderID: p.leaderID, LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.partitionEpoch,
		Replicas: slices.Clone(p.replicas), ISR: slices.Clone(p.isr.committed), MaximalISR: p.isr.maximal(),
		HighWatermark: p.hwm, LogStartOffset: p.log.LogStartOffset(), LogEndOffset: p.log.LogEndOffset(),
		LastFlushedOffset: p.log.LastFlushedOffset(), LeaderEpochStartOffset: p.leaderEpochStart,
	}
	if p.isr.pending != nil {
		c := *p.isr.pending
		c.ISR, c.Changed = slices.Clone(c.ISR), slices.Clone(c.Changed)
		s.Pending = &c
	}
	for _, id := range p.replicas {
		if r, ok := p.remotes[id]; ok {
			s.Followers = append(s.Followers, FollowerState{ReplicaID: id, LogEndOffset: r.leo, LastCaughtUpTime: r.lastCaughtUp, LastFetchTime: r.lastFetch})
		}
	}
	return s
}

// HighWatermark is the replica's high watermark.
func (p *Partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hwm
}

// LogEndOffset is the offset the next batch will take.
func (p *Partition) LogEndOffset() int64 { return p.log.LogEndOffset() }

// Size is the bytes of the replica's log.
func (p *Partition) Size() int64 { return p.log.Size() }

// LogStartOffset is the first offset the replica holds.
func (p *Partition) LogStartOffset() int64 { return p.log.LogStartOffset() }

// Epochs returns the log's leader-epoch cache.
func (p *Partition) Epochs() []storage.EpochEntry { return p.log.Epochs() }

// LastEpoch is the leader epoch of the log's last batch, or -1 (Kafka's
// latestEpoch of the leader-epoch cache).
func (p *Partition) LastEpoch() int32 { return p.log.LastEpoch() }
