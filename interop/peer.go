package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// PeerPart is one measurement of the peer comparison.
type PeerPart string

// The parts, in the order they run on each system.
const (
	PartProduce     PeerPart = "produce"
	PartPropagation PeerPart = "propagation"
	PartFailover    PeerPart = "failover"
)

// ParsePeerPart reads a part's name.
func ParsePeerPart(s string) (PeerPart, error) {
	switch p := PeerPart(s); p {
	case PartProduce, PartPropagation, PartFailover:
		return p, nil
	}
	return "", fmt.Errorf("part %q: want produce, propagation or failover", s)
}

// PeerSystem names one system of the comparison.
type PeerSystem string

// The systems compared. kraftlab runs twice, once per flush policy, since
// one policy covers a node's metadata log and its partitions alike, while
// Apache Kafka fsyncs its metadata log (KafkaRaftClient flushes before a
// batch counts) and leaves its partition logs to the page cache
// (log.flush.interval.* default to never).
const (
	// SystemKraftlab is kraftlab with kraftlab.quorum.flush=never:
	// Kafka's data-plane policy.
	SystemKraftlab PeerSystem = "kraftlab"
	// SystemKraftlabFsync is kraftlab with kraftlab.quorum.flush=always:
	// Kafka's metadata-log policy, and stricter than Kafka's partitions.
	SystemKraftlabFsync PeerSystem = "kraftlab-fsync"
	// SystemKafka is Apache Kafka 4.4 with its defaults.
	SystemKafka PeerSystem = "kafka"
)

// PeerConfig is one peer comparison run.
type PeerConfig struct {
	// Controllers and Brokers are both systems' shape, separate roles.
	Controllers, Brokers int
	// Partitions is each produce case's topic's; its replication factor
	// is min(3, Brokers).
	Partitions int
	Sizes      []int
	Acks       []benchkit.Acks
	// Warmup is one discarded 1 KiB case before the measured ones, so
	// that Kafka's JIT and both systems' first connections are done.
	Warmup, Duration time.Duration
	// Changes is how many one-topic changes propagation times.
	Changes int
	// FailoverRounds is how many times the active controller is killed.
	FailoverRounds int
	// Heap is each Kafka JVM's -Xmx and -Xms.
	Heap  string
	Parts []PeerPart
	// Systems run in this order, one at a time.
	Systems []PeerSystem
	// Dir holds every system's data; empty means a fresh temporary one.
	Dir string
}

// DefaultPeerConfig is the full comparison: 3 controllers and 3 brokers,
// 100 B and 1 KiB at acks=all, 5 s a case, 20 propagated changes and 5
// controller kills, Kafka's JVMs at 512 MB each.
func DefaultPeerConfig() PeerConfig {
	return PeerConfig{
		Controllers: 3, Brokers: 3, Partitions: 3, Sizes: []int{100, 1024}, Acks: []benchkit.Acks{benchkit.AcksAll},
		Warmup: 5 * time.Second, Duration: 5 * time.Second, Changes: 20, FailoverRounds: 5, Heap: "512m",
		Parts:   []PeerPart{PartProduce, PartPropagation, PartFailover},
		Systems: []PeerSystem{SystemKraftlab, SystemKraftlabFsync, SystemKafka},
	}
}

// Validate checks the shape and the counts.
func (c PeerConfig) Validate() error {
	switch {
	case c.Controllers < 1 || c.Controllers > 5:
		return fmt.Errorf("controllers: %d must be between 1 and 5", c.Controllers)
	case c.FailoverRounds > 0 && c.Controllers < 3 && c.has(PartFailover):
		return fmt.Errorf("failover needs 3 or more controllers, not %d", c.Controllers)
	case c.Brokers < 1 || c.Brokers > 10:
		return fmt.Errorf("brokers: %d must be between 1 and 10", c.Brokers)
	case c.Partitions < 1 || c.Partitions > 100:
		return fmt.Errorf("partitions: %d must be between 1 and 100", c.Partitions)
	case c.Changes < 1 || c.Changes > 1000:
		return fmt.Errorf("changes: %d must be between 1 and 1000", c.Changes)
	case c.FailoverRounds < 1 || c.FailoverRounds > 50:
		return fmt.Errorf("failover rounds: %d must be between 1 and 50", c.FailoverRounds)
	case c.Warmup < 0 || c.Warmup > time.Minute:
		return fmt.Errorf("warm-up: %v must be between 0 and 1m", c.Warmup)
	case len(c.Parts) == 0 || len(c.Systems) == 0:
		return errors.New("at least one part and one system")
	case c.Heap == "":
		return errors.New("no Kafka heap size")
	}
	for _, s := range c.Systems {
		switch s {
		case SystemKraftlab, SystemKraftlabFsync, SystemKafka:
		default:
			return fmt.Errorf("system %q: want kraftlab, kraftlab-fsync or kafka", s)
		}
	}
	for _, size := range c.Sizes {
		w := benchkit.ProduceWorkload{Seeds: []string{"-"}, Topic: "-", RecordBytes: size, Acks: benchkit.AcksAll, Duration: c.Duration}
		if err := w.Validate(); err != nil {
			return err
		}
	}
	return nil
}

func (c PeerConfig) has(p PeerPart) bool { return slices.Contains(c.Parts, p) }

// PeerSystemReport is what one system measured.
type PeerSystemReport struct {
	System PeerSystem `json:"system"`
	// Setup says how the system ran: its flush policy, heaps, processes.
	Setup string `json:"setup"`
	// StartSeconds is from starting the processes to every broker
	// listing every broker and the quorum caught up.
	StartSeconds float64                `json:"startSeconds"`
	Produce      []benchkit.ProduceCase `json:"produce,omitempty"`
	Propagation  *PeerPropagation       `json:"propagation,omitempty"`
	Failover     *PeerFailover          `json:"failover,omitempty"`
	Error        string                 `json:"error,omitempty"`
}

// PeerReport is a whole comparison.
type PeerReport struct {
	// LoopbackMBPerSec is one TCP connection's bulk throughput, measured
	// first: the ceiling.
	LoopbackMBPerSec float64            `json:"loopbackMBPerSec"`
	Systems          []PeerSystemReport `json:"systems"`
}

// RunPeers measures every system of cfg, one after the other: each is
// started, measured and stopped before the next starts, so no two load
// the machine at once. kraftlabBin is a built kraftlab binary. An error
// in one system is kept in its report and the run goes on; the returned
// error joins them.
func RunPeers(ctx context.Context, k *Kafka, kraftlabBin string, cfg PeerConfig, progress io.Writer) (PeerReport, error) {
	var rep PeerReport
	if err := cfg.Validate(); err != nil {
		return rep, fmt.Errorf("peer comparison: %w", err)
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "kraftlab-peers-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	lb, err := benchkit.MeasureLoopback(time.Second)
	if err != nil {
		return rep, err
	}
	rep.LoopbackMBPerSec = lb
	fmt.Fprintf(progress, "loopback TCP: %.0f MB/s\n", lb)
	var errs []error
	for _, sys := range cfg.Systems {
		sr := runPeerSystem(ctx, k, kraftlabBin, cfg, sys, lb, progress)
		if sr.Error != "" {
			errs = append(errs, fmt.Errorf("%s: %s", sys, sr.Error))
		}
		rep.Systems = append(rep.Systems, sr)
		if ctx.Err() != nil {
			break
		}
	}
	return rep, errors.Join(errs...)
}

func runPeerSystem(ctx context.Context, k *Kafka, bin string, cfg PeerConfig, sys PeerSystem, loopback float64, progress io.Writer) PeerSystemReport {
	sr := PeerSystemReport{System: sys}
	fail := func(err error) PeerSystemReport {
		sr.Error = err.Error()
		fmt.Fprintf(progress, "%s: %v\n", sys, err)
		return sr
	}
	dir := filepath.Join(cfg.Dir, string(sys))
	t0 := time.Now()
	var pc peerCluster
	switch sys {
	case SystemKafka:
		if k == nil {
			return fail(errors.New("no Kafka here"))
		}
		sr.Setup = fmt.Sprintf("Apache Kafka %s, %d controller and %d broker JVMs (process.roles one each), -Xmx%s -Xms%[4]s each, G1 as kafka-server-start; partition logs not fsynced (log.flush.interval.* never), metadata log fsynced per batch", KafkaVersion, cfg.Controllers, cfg.Brokers, cfg.Heap)
		c, err := StartKafkaCluster(ctx, k, dir, KafkaClusterShape{Controllers: cfg.Controllers, Brokers: cfg.Brokers, Heap: cfg.Heap})
		if err != nil {
			return fail(err)
		}
		pc = kafkaPeer{c}
	default:
		flush, fsynced := "never", "never"
		if sys == SystemKraftlabFsync {
			flush, fsynced = "always", "on every append"
		}
		sr.Setup = fmt.Sprintf("kraftlab up --profile kafka --set kraftlab.quorum.flush=%s: %d controllers and %d brokers in one process; partition and metadata logs fsynced %s", flush, cfg.Controllers, cfg.Brokers, fsynced)
		p, err := startKraftlabPeer(ctx, bin, dir, cfg.Controllers, cfg.Brokers, []string{"kraftlab.quorum.flush=" + flush})
		if err != nil {
			return fail(err)
		}
		pc = p
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := pc.stop(sctx); err != nil && sr.Error == "" {
			sr.Error = fmt.Sprintf("stop: %v", err)
		}
	}()
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	err := waitPeerReady(rctx, pc, cfg.Controllers, cfg.Brokers)
	cancel()
	if err != nil {
		return fail(err)
	}
	sr.StartSeconds = time.Since(t0).Seconds()
	fmt.Fprintf(progress, "%s: ready in %.1f s (%s)\n", sys, sr.StartSeconds, sr.Setup)
	if cfg.has(PartProduce) {
		cases, err := runPeerProduce(ctx, pc, cfg, loopback, string(sys), progress)
		sr.Produce = cases
		if err != nil {
			return fail(fmt.Errorf("produce: %w", err))
		}
	}
	// Only kraftlab with fsync matches Kafka's metadata-log policy; the
	// no-fsync kraftlab would win the metadata parts for a reason that
	// is not the engine's.
	if sys == SystemKraftlab && slices.Contains(cfg.Systems, SystemKraftlabFsync) {
		return sr
	}
	if cfg.has(PartPropagation) {
		prop, err := runPeerPropagation(ctx, pc, cfg, string(sys), progress)
		sr.Propagation = &prop
		if err != nil {
			return fail(fmt.Errorf("propagation: %w", err))
		}
	}
	if cfg.has(PartFailover) {
		fo, err := runPeerFailover(ctx, pc, cfg, string(sys), progress)
		sr.Failover = &fo
		if err != nil {
			return fail(fmt.Errorf("failover: %w", err))
		}
	}
	return sr
}

// waitPeerReady waits until every broker's Metadata lists every broker
// and a controller leads a caught-up quorum.
func waitPeerReady(ctx context.Context, pc peerCluster, controllers, brokers int) error {
	bs, err := pinnedAll(pc.brokers())
	if err != nil {
		return err
	}
	defer closeAll(bs)
	if len(bs) != brokers {
		return fmt.Errorf("%d broker listeners, want %d", len(bs), brokers)
	}
	for _, b := range bs {
		if err := pollUntil(ctx, "broker "+b.addr+" to list every broker", 50*time.Millisecond, func(ctx context.Context) (bool, error) {
			ids, err := liveBrokers(ctx, b)
			return len(ids) == brokers, err
		}); err != nil {
			return err
		}
	}
	return pollUntil(ctx, "a caught-up metadata quorum", 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		l, err := activeController(ctx, pc)
		if err != nil {
			return false, err
		}
		defer l.close()
		return quorumCaughtUp(ctx, l, controllers)
	})
}

// activeController asks the running controllers who leads and returns a
// client pinned to that one.
func activeController(ctx context.Context, pc peerCluster) (*pinned, error) {
	addrs := pc.controllers()
	var last error
	for _, addr := range addrs {
		p, err := newPinned(addr)
		if err != nil {
			return nil, err
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		id, err := quorumLeader(rctx, p)
		cancel()
		p.close()
		if err != nil {
			last = err
			continue
		}
		if a, ok := addrs[id]; ok {
			return newPinned(a)
		}
	}
	if last == nil {
		last = errors.New("no controller knows a leader")
	}
	return nil, last
}
