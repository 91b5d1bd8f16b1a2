package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/server"
)

// MetadataPart is one measurement of `bench metadata`.
type MetadataPart string

// The parts of `bench metadata`, in report order.
const (
	// PartPropagation times committed changes reaching every broker of a
	// real cluster.
	PartPropagation MetadataPart = "propagation"
	// PartScale measures images of many partitions on real loaders in
	// this process: memory, one change on every loader, snapshots.
	PartScale MetadataPart = "scale"
	// PartFailover times a new active controller's first CreateTopics
	// after the active one is killed, at several metadata sizes.
	PartFailover MetadataPart = "failover"
)

// MetadataParts lists the parts in report order.
func MetadataParts() []MetadataPart {
	return []MetadataPart{PartPropagation, PartScale, PartFailover}
}

// MetadataConfig is one `bench metadata` run.
type MetadataConfig struct {
	// Parts are the measurements to run; none means all.
	Parts    []MetadataPart
	Profile  string
	Settings server.Settings
	// Brokers is the propagation cluster's broker count, and the scale
	// part's loader count (as far as ScaleMemory allows).
	Brokers int
	// Changes is how many topics the propagation part creates at each
	// of PropagationPartitions.
	Changes int
	// PropagationPartitions are the metadata sizes (partitions created
	// beforehand) the propagation part measures at, on one cluster.
	PropagationPartitions []int
	// Partitions are the scale part's image sizes.
	Partitions []int
	// ScaleChanges is how many PartitionChangeRecords the scale part
	// applies on every loader, per size.
	ScaleChanges int
	// ScaleMemory bounds the heap the scale part's loaders may hold
	// together: at sizes where Brokers images would not fit, it runs
	// fewer loaders and says so.
	ScaleMemory int64
	// FailoverPartitions are the metadata sizes the failover part kills
	// the active controller at; FailoverBrokers and FailoverRounds its
	// cluster's brokers and kills per size.
	FailoverPartitions []int
	FailoverBrokers    int
	FailoverRounds     int
	// FailoverShutdown also stops, after the kills, the broker leading
	// the most partitions, timing its controlled shutdown.
	FailoverShutdown bool
	// Dir holds the clusters' folders; empty means a fresh temporary one.
	Dir string
}

// MetadataReport is everything one `bench metadata` run measured.
type MetadataReport struct {
	Propagation []Propagation  `json:"propagation,omitempty"`
	Scale       []Scale        `json:"scale,omitempty"`
	Failover    []MetaFailover `json:"failover,omitempty"`
}

func (c MetadataConfig) runs(p MetadataPart) bool {
	if len(c.Parts) == 0 {
		return true
	}
	for _, q := range c.Parts {
		if q == p {
			return true
		}
	}
	return false
}

// Validate checks the sizes make sense.
func (c MetadataConfig) Validate() error {
	switch {
	case c.Brokers < 1 || c.Brokers > 500:
		return fmt.Errorf("brokers: %d must be between 1 and 500", c.Brokers)
	case c.runs(PartPropagation) && c.Changes < 1:
		return fmt.Errorf("changes: %d must be at least 1", c.Changes)
	case c.runs(PartScale) && c.ScaleChanges < 1:
		return fmt.Errorf("scale changes: %d must be at least 1", c.ScaleChanges)
	case c.runs(PartFailover) && (c.FailoverRounds < 1 || c.FailoverBrokers < 1):
		return errors.New("failover: rounds and brokers must be at least 1")
	}
	for _, n := range c.Partitions {
		if n < 1 || n > 10_000_000 {
			return fmt.Errorf("partitions: %d must be between 1 and 10,000,000", n)
		}
	}
	for _, n := range c.PropagationPartitions {
		if n < 0 || n > 1_000_000 {
			return fmt.Errorf("propagation partitions: %d must be between 0 and 1,000,000", n)
		}
	}
	for _, n := range c.FailoverPartitions {
		if n < 0 || n > 1_000_000 {
			return fmt.Errorf("failover partitions: %d must be between 0 and 1,000,000", n)
		}
	}
	return c.Settings.Validate()
}

// RunMetadata runs the parts of cfg in turn and returns what they
// measured; it stops at the first part that fails, returning the results
// so far (the failed part's included, with its error).
func RunMetadata(ctx context.Context, cfg MetadataConfig, progress io.Writer) (MetadataReport, error) {
	var rep MetadataReport
	if err := cfg.Validate(); err != nil {
		return rep, fmt.Errorf("bench metadata: %w", err)
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "kraftlab-bench-metadata-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	if cfg.runs(PartPropagation) {
		p, err := runPropagation(ctx, cfg, progress)
		rep.Propagation = p
		if err != nil {
			return rep, err
		}
	}
	if cfg.runs(PartScale) {
		for _, n := range cfg.Partitions {
			s, err := runScale(cfg, n, progress)
			rep.Scale = append(rep.Scale, s)
			if err != nil {
				return rep, err
			}
			if ctx.Err() != nil {
				return rep, fmt.Errorf("interrupted: %w", ctx.Err())
			}
		}
	}
	if cfg.runs(PartFailover) {
		for _, n := range cfg.FailoverPartitions {
			f, err := runMetaFailover(ctx, cfg, n, progress)
			rep.Failover = append(rep.Failover, f)
			if err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// subDir makes a fresh folder for one cluster under dir.
func subDir(dir, name string) (string, error) {
	d, err := os.MkdirTemp(dir, name+"-")
	if err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	return d, nil
}

// clusterStartTimeout bounds a cluster's start: every broker must
// register and be unfenced, a few heartbeat intervals on a loaded machine.
func clusterStartTimeout(cfg MetadataConfig) time.Duration {
	t := cfg.Settings
	return 10*t.BrokerHeartbeatInterval + 4*(t.FetchTimeout+2*t.ElectionTimeout) + 30*time.Second
}

// roundTimeout bounds one change or one failover round.
func roundTimeout(cfg MetadataConfig) time.Duration {
	t := cfg.Settings
	return 4*(t.FetchTimeout+2*t.ElectionTimeout) + 2*t.RequestTimeout + 10*t.BrokerHeartbeatInterval + 10*time.Second
}

// DefaultMetadataConfig is `bench metadata` as the issue asks for it: 50
// brokers and 200 changes for propagation, on empty metadata and at
// 100,000 partitions, images of 100,000 and
// 1,000,000 partitions within 4 GB of loaders, and failover at 1,000 and
// 100,000 partitions with 3 brokers, 5 kills each.
func DefaultMetadataConfig() MetadataConfig {
	t, _ := cluster.ProfileSettings(cluster.ProfileKafka)
	return MetadataConfig{
		Profile: string(cluster.ProfileKafka), Settings: t,
		Brokers: 50, Changes: 200, PropagationPartitions: []int{0, 100_000},
		Partitions: []int{100_000, 1_000_000}, ScaleChanges: 200, ScaleMemory: 4e9,
		FailoverPartitions: []int{1_000, 100_000}, FailoverBrokers: 3, FailoverRounds: 5,
	}
}

// QuickMetadataConfig is `bench metadata --quick`: every part at tiny
// sizes on the fast profile, in a few seconds.
func QuickMetadataConfig() MetadataConfig {
	t, _ := cluster.ProfileSettings(cluster.ProfileFast)
	return MetadataConfig{
		Profile: string(cluster.ProfileFast), Settings: t,
		Brokers: 3, Changes: 5, PropagationPartitions: []int{0, 200},
		Partitions: []int{2_000}, ScaleChanges: 10, ScaleMemory: 4e9,
		FailoverPartitions: []int{300}, FailoverBrokers: 1, FailoverRounds: 1,
	}
}
