package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// System is a cluster a scenario runs on, kraftlab's playground or a real
// Kafka cluster of the same shape: controllers 1..N, brokers 101..100+M.
// Its actions are the ones the failure scenarios need; what it reports is
// read by Kafka's own tools (through its listeners) and from the files its
// nodes write.
type System interface {
	// Name is "kraftlab" or "kafka".
	Name() string
	// Controllers and Brokers list the node ids, lowest first.
	Controllers() []int32
	Brokers() []int32
	// Addr is node id's listener (CONTROLLER for a controller).
	Addr(id int32) string
	// Running reports whether the node was not killed or stopped since
	// it last started.
	Running(id int32) bool
	// Kill ends a node at once; Stop shuts it down cleanly (a leading
	// controller resigns first); Start brings it back on its data.
	Kill(ctx context.Context, id int32) error
	Stop(ctx context.Context, id int32) error
	Start(ctx context.Context, id int32) error
	// Isolate cuts every link between node id and the other nodes (the
	// harness still reaches it); Heal restores every link.
	Isolate(ctx context.Context, id int32) error
	Heal(ctx context.Context) error
	// Snapshot makes controller id snapshot its metadata log and let the
	// log start follow; LogStart reads where its log now starts, from the
	// files it keeps (see each implementation).
	Snapshot(ctx context.Context, id int32) error
	LogStart(id int32) (int64, error)
	// MetadataDir is node id's __cluster_metadata-0 folder.
	MetadataDir(id int32) string
	// QuorumStateFile is the path of node id's quorum-state file.
	QuorumStateFile(id int32) string
	// Close ends the whole system.
	Close(ctx context.Context) error
}

// KraftlabSystem is a kraftlab playground as a System; its actions are
// kraftlab's own commands (kill, stop, start).
type KraftlabSystem struct {
	P *Playground

	mu      sync.Mutex
	stopped map[int32]bool
}

// NewKraftlabSystem wraps a started playground.
func NewKraftlabSystem(p *Playground) *KraftlabSystem {
	return &KraftlabSystem{P: p, stopped: map[int32]bool{}}
}

// Name is "kraftlab".
func (s *KraftlabSystem) Name() string { return "kraftlab" }

// Controllers lists the playground's controller ids.
func (s *KraftlabSystem) Controllers() []int32 {
	var ids []int32
	for id := range s.P.Controllers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Brokers lists the playground's broker ids.
func (s *KraftlabSystem) Brokers() []int32 {
	var ids []int32
	for i := range s.P.Brokers {
		ids = append(ids, int32(101+i))
	}
	return ids
}

// Addr is node id's listener.
func (s *KraftlabSystem) Addr(id int32) string {
	if a, ok := s.P.Controllers[id]; ok {
		return a
	}
	if i := int(id) - 101; i >= 0 && i < len(s.P.Brokers) {
		return s.P.Brokers[i]
	}
	return ""
}

// Running reports whether kraftlab was not told to kill or stop the node
// since it last started it.
func (s *KraftlabSystem) Running(id int32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.stopped[id]
}

// act runs a node command. A node counts as down from the moment it is
// told to go (so that nothing asks a node in the middle of its
// shutdown), and as up once it has started.
func (s *KraftlabSystem) act(ctx context.Context, verb string, id int32, stopped bool) error {
	if stopped {
		s.setStopped(id, true)
	}
	if _, err := s.P.Run(ctx, verb, strconv.Itoa(int(id))); err != nil {
		return err
	}
	s.setStopped(id, stopped)
	return nil
}

func (s *KraftlabSystem) setStopped(id int32, stopped bool) {
	s.mu.Lock()
	s.stopped[id] = stopped
	s.mu.Unlock()
}

// Kill runs `kraftlab kill ID`.
func (s *KraftlabSystem) Kill(ctx context.Context, id int32) error {
	return s.act(ctx, "kill", id, true)
}

// Stop runs `kraftlab stop ID`.
func (s *KraftlabSystem) Stop(ctx context.Context, id int32) error {
	return s.act(ctx, "stop", id, true)
}

// Start runs `kraftlab start ID`.
func (s *KraftlabSystem) Start(ctx context.Context, id int32) error {
	return s.act(ctx, "start", id, false)
}

// Isolate runs `kraftlab isolate ID`.
func (s *KraftlabSystem) Isolate(ctx context.Context, id int32) error {
	_, err := s.P.Run(ctx, "isolate", strconv.Itoa(int(id)))
	return err
}

// Heal runs `kraftlab heal`.
func (s *KraftlabSystem) Heal(ctx context.Context) error {
	_, err := s.P.Run(ctx, "heal")
	return err
}

// Snapshot runs `kraftlab snapshot ID`, which moves the log start to the
// snapshot at once.
func (s *KraftlabSystem) Snapshot(ctx context.Context, id int32) error {
	_, err := s.P.Run(ctx, "snapshot", strconv.Itoa(int(id)))
	return err
}

// LogStart is the metadata log's log-start-offset-checkpoint (kraftlab's
// storage keeps one, as Kafka's partitions do); without it the log starts
// at 0.
func (s *KraftlabSystem) LogStart(id int32) (int64, error) {
	return readLogStartCheckpoint(filepath.Join(s.P.MetadataDir(id), "log-start-offset-checkpoint"))
}

// MetadataDir is node id's __cluster_metadata-0 in the playground's data.
func (s *KraftlabSystem) MetadataDir(id int32) string { return s.P.MetadataDir(id) }

// QuorumStateFile is node id's quorum-state in the playground's data.
func (s *KraftlabSystem) QuorumStateFile(id int32) string {
	return filepath.Join(s.P.MetadataDir(id), "quorum-state")
}

// Close runs `kraftlab down`.
func (s *KraftlabSystem) Close(ctx context.Context) error { return s.P.Down(ctx) }

// KafkaSystem is a KafkaCluster as a System: kill is SIGKILL, stop is
// SIGTERM (Kafka's controlled shutdown), start runs the JVM again.
type KafkaSystem struct{ C *KafkaCluster }

// Name is "kafka".
func (s KafkaSystem) Name() string { return "kafka" }

func (s KafkaSystem) ids(controllers bool) []int32 {
	var ids []int32
	for id, n := range s.C.Nodes {
		if n.Controller == controllers {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Controllers lists the controller ids.
func (s KafkaSystem) Controllers() []int32 { return s.ids(true) }

// Brokers lists the broker ids.
func (s KafkaSystem) Brokers() []int32 { return s.ids(false) }

// Addr is node id's listener.
func (s KafkaSystem) Addr(id int32) string {
	if n := s.C.Nodes[id]; n != nil {
		return n.Addr
	}
	return ""
}

// Running reports whether node id's process runs.
func (s KafkaSystem) Running(id int32) bool { n := s.C.Nodes[id]; return n != nil && n.Running() }

// Kill sends node id SIGKILL.
func (s KafkaSystem) Kill(_ context.Context, id int32) error { return s.C.Kill(id) }

// Stop sends node id SIGTERM and waits up to a minute for its clean
// shutdown.
func (s KafkaSystem) Stop(_ context.Context, id int32) error { return s.C.Stop(id, time.Minute) }

// Start runs node id's JVM again.
func (s KafkaSystem) Start(_ context.Context, id int32) error { return s.C.Start(id) }

// Isolate cuts node id's link proxies.
func (s KafkaSystem) Isolate(_ context.Context, id int32) error { return s.C.Isolate(id) }

// Heal restores every link proxy.
func (s KafkaSystem) Heal(context.Context) error { s.C.Heal(); return nil }

// Snapshot does nothing: Kafka has no tool that makes a node snapshot.
// Its timers do it (metadata.log.max.snapshot.interval.ms), and its log
// cleaner, every 60 s (KafkaRaftClient's RaftMetadataLogCleanerManager),
// moves the log start to the newest snapshot once the older ones are past
// metadata.max.retention.ms.
func (s KafkaSystem) Snapshot(context.Context, int32) error { return nil }

// LogStart is the end offset of the node's oldest snapshot, or 0 without
// one: Kafka keeps no log start file for the metadata log, and its
// cleaner moves the log start to a snapshot as it forgets every older one
// (KafkaRaftLog.deleteBeforeSnapshot).
func (s KafkaSystem) LogStart(id int32) (int64, error) {
	n, err := s.node(id)
	if err != nil {
		return 0, err
	}
	offs, err := SnapshotOffsets(n.MetadataDir())
	if err != nil || len(offs) == 0 {
		return 0, err
	}
	return offs[0], nil
}

func (s KafkaSystem) node(id int32) (*KafkaNode, error) { return s.C.node(id) }

// MetadataDir is node id's __cluster_metadata-0 folder.
func (s KafkaSystem) MetadataDir(id int32) string {
	if n := s.C.Nodes[id]; n != nil {
		return n.MetadataDir()
	}
	return ""
}

// QuorumStateFile is node id's quorum-state.
func (s KafkaSystem) QuorumStateFile(id int32) string {
	if n := s.C.Nodes[id]; n != nil {
		return n.QuorumStateFile()
	}
	return ""
}

// Close kills every node.
func (s KafkaSystem) Close(context.Context) error { s.C.Close(); return nil }

// QuorumLeader is what the leader's DescribeQuorum answer says.
type QuorumLeader struct {
	Leader        int32
	Epoch         int32
	HighWatermark int64
}

// DescribeQuorumLeader asks every running controller of sys for
// DescribeQuorum and returns the answer of the one that leads in the
// highest epoch (only a leader answers without error; an isolated old
// leader may still answer for its older epoch).
func DescribeQuorumLeader(sys System) (QuorumLeader, error) {
	var errs []error
	var best QuorumLeader
	for _, id := range sys.Controllers() {
		if !sys.Running(id) {
			continue
		}
		p, err := QuorumView(sys, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p.ErrorCode == 0 && p.LeaderID == id && p.LeaderEpoch > best.Epoch {
			best = QuorumLeader{Leader: p.LeaderID, Epoch: p.LeaderEpoch, HighWatermark: p.HighWatermark}
		}
	}
	if best.Leader == 0 {
		return best, fmt.Errorf("no running controller of %s answers DescribeQuorum as leader: %w", sys.Name(), errors.Join(errs...))
	}
	return best, nil
}

// QuorumView is controller id's DescribeQuorum answer for
// __cluster_metadata-0: the leader's view, or the partition's error code
// (NOT_LEADER_OR_FOLLOWER, 6) from any other node.
func QuorumView(sys System, id int32) (kmsg.DescribeQuorumResponseTopicPartition, error) {
	r, err := DescribeQuorum(sys.Addr(id))
	if err != nil {
		return kmsg.DescribeQuorumResponseTopicPartition{}, fmt.Errorf("controller %d: %w", id, err)
	}
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		p := kmsg.NewDescribeQuorumResponseTopicPartition()
		p.ErrorCode = r.ErrorCode
		return p, nil
	}
	p := r.Topics[0].Partitions[0]
	if p.ErrorCode == 0 {
		p.ErrorCode = r.ErrorCode
	}
	return p, nil
}

// runningBroker is the lowest running broker's listener.
func runningBroker(sys System) (int32, string, error) {
	for _, id := range sys.Brokers() {
		if sys.Running(id) {
			return id, sys.Addr(id), nil
		}
	}
	return 0, "", fmt.Errorf("%s has no running broker", sys.Name())
}

// BrokerFencing asks a running broker of sys for DescribeCluster with
// the fenced brokers included and returns each broker's fencing.
func BrokerFencing(sys System) (map[int32]bool, error) {
	_, addr, err := runningBroker(sys)
	if err != nil {
		return nil, err
	}
	return BrokerFencingAt(addr)
}

// BrokerFencingAt asks the broker at addr for DescribeCluster with the
// fenced brokers included and returns each broker's fencing as that
// broker's metadata has it.
func BrokerFencingAt(addr string) (map[int32]bool, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 2
	req.IncludeFencedBrokers = true
	r, err := Request(addr, req)
	if err != nil {
		return nil, fmt.Errorf("DescribeCluster: %w", err)
	}
	resp := r.(*kmsg.DescribeClusterResponse)
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("DescribeCluster: error code %d", resp.ErrorCode)
	}
	out := map[int32]bool{}
	for _, b := range resp.Brokers {
		out[b.NodeID] = b.IsFenced
	}
	return out, nil
}

// PartitionLeader asks a running broker of sys for topic's metadata and
// returns partition 0 as the broker knows it.
func PartitionLeader(sys System, topic string) (TopicPartition, error) {
	_, addr, err := runningBroker(sys)
	if err != nil {
		return TopicPartition{}, err
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{t}
	r, err := Request(addr, req)
	if err != nil {
		return TopicPartition{}, fmt.Errorf("metadata: %w", err)
	}
	for _, mt := range r.(*kmsg.MetadataResponse).Topics {
		if mt.Topic == nil || *mt.Topic != topic || mt.ErrorCode != 0 {
			continue
		}
		for _, p := range mt.Partitions {
			if p.Partition == 0 {
				return TopicPartition{Partition: 0, Leader: p.Leader, Replicas: p.Replicas, Isr: p.ISR}, nil
			}
		}
	}
	return TopicPartition{}, fmt.Errorf("%s: no partition 0 of %s in the metadata of %s", sys.Name(), topic, addr)
}

// QuorumStateFile is the content of a quorum-state file (Kafka's
// QuorumStateData, written by kraftlab's storage as by Kafka's
// FileQuorumStateStore).
type QuorumStateFile struct {
	LeaderID    int32 `json:"leaderId"`
	LeaderEpoch int32 `json:"leaderEpoch"`
	VotedID     int32 `json:"votedId"`
	DataVersion int   `json:"data_version"`
	// Keys are the file's top-level keys, sorted.
	Keys []string `json:"-"`
}

// ReadQuorumStateFile reads and decodes a quorum-state file.
func ReadQuorumStateFile(path string) (QuorumStateFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return QuorumStateFile{}, err
	}
	var q QuorumStateFile
	if err := json.Unmarshal(b, &q); err != nil {
		return QuorumStateFile{}, fmt.Errorf("quorum-state %s: %w", path, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return QuorumStateFile{}, fmt.Errorf("quorum-state %s: %w", path, err)
	}
	for k := range m {
		q.Keys = append(q.Keys, k)
	}
	slices.Sort(q.Keys)
	return q, nil
}

// SnapshotOffsets lists the end offsets of the snapshots in a metadata
// log folder (<offset>-<epoch>.checkpoint, the name both write), lowest
// first; snapshots marked for deletion are left out.
func SnapshotOffsets(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var offs []int64
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), ".checkpoint")
		if !ok {
			continue
		}
		off, _, ok := strings.Cut(stem, "-")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(off, 10, 64)
		if err != nil {
			continue
		}
		offs = append(offs, n)
	}
	slices.Sort(offs)
	return offs, nil
}

// readLogStartCheckpoint reads a log-start-offset-checkpoint file (a
// version line, a count line, the offset); without the file the log
// starts at 0.
func readLogStartCheckpoint(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	lines := strings.Fields(string(b))
	if len(lines) != 3 {
		return 0, fmt.Errorf("%s: %d fields, want version, count and offset", path, len(lines))
	}
	n, err := strconv.ParseInt(lines[2], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// KraftlabUpArgs are the `kraftlab up` flags of a playground whose
// timing is Kafka's defaults (the kafka profile) with the overrides
// given by their Kafka names, the same lines a Kafka cluster takes in
// its properties. Its quorum is static (kraft.version 0), as
// StartKafkaCluster's is (controller.quorum.voters): the two then write
// the same quorum-state files and logs.
func KraftlabUpArgs(controllers, brokers int, overrides []string) []string {
	args := []string{"--controllers", strconv.Itoa(controllers), "--brokers", strconv.Itoa(brokers), "--profile", "kafka", "--set", "kraft.version=0"}
	for _, o := range overrides {
		args = append(args, "--set", strings.TrimSpace(o))
	}
	return args
}
