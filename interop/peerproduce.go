package interop

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// runPeerProduce runs benchkit's produce case against pc's brokers: a
// discarded warm-up, then every acks setting and size on a fresh topic,
// charging the CPU of pc's processes only (the franz-go clients run in
// this process, on both systems alike, and are left out).
func runPeerProduce(ctx context.Context, pc peerCluster, cfg PeerConfig, loopback float64, name string, progress io.Writer) ([]benchkit.ProduceCase, error) {
	rf := int16(min(3, cfg.Brokers))
	cpu := func() (time.Duration, bool) {
		d, err := ProcessCPU(pc.pids())
		return d, err == nil
	}
	if cfg.Warmup > 0 {
		if err := peerTopic(ctx, pc, "peer-warm-up", int32(cfg.Partitions), rf); err != nil {
			return nil, err
		}
		w := benchkit.ProduceWorkload{Seeds: pc.brokers(), Topic: "peer-warm-up", RecordBytes: 1024, Acks: benchkit.AcksAll, Duration: cfg.Warmup, CPU: cpu}
		if _, err := benchkit.ProduceAt(ctx, w); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	var out []benchkit.ProduceCase
	for i, acks := range cfg.Acks {
		for j, size := range cfg.Sizes {
			topic := fmt.Sprintf("peer-produce-%d-%d", i, j)
			if err := peerTopic(ctx, pc, topic, int32(cfg.Partitions), rf); err != nil {
				return out, err
			}
			w := benchkit.ProduceWorkload{Seeds: pc.brokers(), Topic: topic, RecordBytes: size, Acks: acks, Duration: cfg.Duration, CPU: cpu}
			c, err := benchkit.ProduceAt(ctx, w)
			if err != nil {
				return out, fmt.Errorf("%d B, acks=%s: %w", size, acks, err)
			}
			if c.CPUPerMB == 0 {
				return out, fmt.Errorf("%d B, acks=%s: the processes' CPU could not be read", size, acks)
			}
			c.OfLoopback = c.MBPerSec / loopback
			out = append(out, c)
			fmt.Fprintf(progress, "%s: %d B acks=%s: %.0f records/s, %.1f MB/s, end to end p50 %v p99 %v, %v CPU/MB\n",
				name, size, acks, c.RecordsPerSec, c.MBPerSec, c.EndToEnd.P50, c.EndToEnd.P99, c.CPUPerMB.Round(time.Microsecond))
		}
	}
	return out, nil
}

// peerTopic creates topic through the active controller, retrying while
// the leadership moves, and waits until every broker's Metadata gives
// each partition a leader.
func peerTopic(ctx context.Context, pc peerCluster, topic string, partitions int32, rf int16) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := pollUntil(ctx, "CreateTopics "+topic, 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		l, err := activeController(ctx, pc)
		if err != nil {
			return false, err
		}
		defer l.close()
		err = createTopic(ctx, l, topic, partitions, rf)
		return err == nil, err
	}); err != nil {
		return err
	}
	bs, err := pinnedAll(pc.brokers())
	if err != nil {
		return err
	}
	defer closeAll(bs)
	for _, b := range bs {
		if err := pollUntil(ctx, topic+" on broker "+b.addr, 5*time.Millisecond, func(ctx context.Context) (bool, error) {
			return topicReady(ctx, b, topic, int(partitions))
		}); err != nil {
			return err
		}
	}
	return nil
}
