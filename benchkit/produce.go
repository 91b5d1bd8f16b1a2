package benchkit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/server"
)

// Acks is a producer's acks setting.
type Acks string

// The acks settings `bench produce` measures.
const (
	// AcksAll waits for every in-sync replica (acks=-1).
	AcksAll Acks = "all"
	// AcksLeader waits for the leader's append only (acks=1).
	AcksLeader Acks = "1"
)

// ParseAcks reads all, -1 or 1.
func ParseAcks(s string) (Acks, error) {
	switch s {
	case "all", "-1":
		return AcksAll, nil
	case "1":
		return AcksLeader, nil
	}
	return "", fmt.Errorf("acks %q: want all (or -1) or 1", s)
}

func (a Acks) kgo() kgo.Acks {
	if a == AcksLeader {
		return kgo.LeaderAck()
	}
	return kgo.AllISRAcks()
}

// produceBuffered bounds the records the producer holds unacknowledged,
// so that the produce latency is the cluster's more than the client
// queue's.
const produceBuffered = 2000

// warmUpKey marks the records a produce case sends before its clock
// starts, so that the consumer leaves it out of the end-to-end latency.
const warmUpKey = "kraftlab-bench-warm-up"

// minProduceRecordBytes is the smallest record: its value carries the
// time it was produced, for the end-to-end latency.
const minProduceRecordBytes = 8

// ProduceConfig is one `bench produce` run.
type ProduceConfig struct {
	Profile  string
	Settings server.Settings
	// Brokers and Partitions shape the cluster and each case's topic,
	// whose replication factor is min(3, Brokers).
	Brokers, Partitions int
	// Sizes are the record value sizes; Acks the settings; every pair is
	// one case of Duration.
	Sizes    []int
	Acks     []Acks
	Duration time.Duration
	// CatchUpBytes is how much a stopped follower replicates when it
	// comes back (the catch-up part); 0 skips it.
	CatchUpBytes int64
	// Dir holds the cluster's folder; empty means a fresh temporary one.
	Dir string
	// Profiles are the files the run writes Go's profiles of its produce
	// cases to.
	Profiles Profiles
}

// DefaultProduceConfig is `bench produce` without flags: 3 brokers, a
// topic of 3 partitions and replication factor 3 per case, 100 B and
// 1 KiB records, acks=all and acks=1, 5 s each, and a 64 MiB catch-up, on
// the kafka profile.
func DefaultProduceConfig() ProduceConfig {
	t, _ := cluster.ProfileSettings(cluster.ProfileKafka)
	return ProduceConfig{
		Profile: string(cluster.ProfileKafka), Settings: t, Brokers: 3, Partitions: 3,
		Sizes: []int{100, 1024}, Acks: []Acks{AcksAll, AcksLeader}, Duration: 5 * time.Second,
		CatchUpBytes: 64 << 20,
	}
}

// QuickProduceConfig runs every part briefly on the fast profile.
func QuickProduceConfig() ProduceConfig {
	c := DefaultProduceConfig()
	c.Profile = string(cluster.ProfileFast)
	c.Settings, _ = cluster.ProfileSettings(cluster.ProfileFast)
	c.Sizes, c.Duration, c.CatchUpBytes = []int{100}, 500*time.Millisecond, 1<<20
	return c
}

// Validate checks the shape and sizes.
func (c ProduceConfig) Validate() error {
	switch {
	case c.Brokers < 1 || c.Brokers > 20:
		return fmt.Errorf("brokers: %d must be between 1 and 20", c.Brokers)
	case c.Partitions < 1 || c.Partitions > 1000:
		return fmt.Errorf("partitions: %d must be between 1 and 1000", c.Partitions)
	case c.Duration < 100*time.Millisecond || c.Duration > 10*time.Minute:
		return fmt.Errorf("duration: %v must be between 100ms and 10m", c.Duration)
	case c.CatchUpBytes < 0 || c.CatchUpBytes > 4<<30:
		return fmt.Errorf("catch-up bytes: %d must be between 0 and 4 GiB", c.CatchUpBytes)
	case len(c.Sizes) == 0 || len(c.Acks) == 0:
		return errors.New("at least one size and one acks setting")
	}
	for _, s := range c.Sizes {
		if s < minProduceRecordBytes || s > 1<<20 {
			return fmt.Errorf("size: %d B must be between %d B and 1 MiB", s, minProduceRecordBytes)
		}
	}
	return c.Settings.Validate()
}

// ProduceCase is what one size and acks setting measured.
type ProduceCase struct {
	RecordBytes int  `json:"recordBytes"`
	Acks        Acks `json:"acks"`
	// Records were acknowledged in Seconds, from the first produce to the
	// last acknowledgement.
	Records       int64   `json:"records"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	MBPerSec      float64 `json:"mbPerSec"`
	// OfLoopback is MBPerSec over the loopback TCP throughput.
	OfLoopback float64 `json:"ofLoopback"`
	// Produce is from handing a record to the client to its
	// acknowledgement; EndToEnd from handing it over to a consumer
	// reading it (consumers read up to the high watermark, so both acks
	// settings wait for the followers there).
	Produce  Latency `json:"produce"`
	EndToEnd Latency `json:"endToEnd"`
	// CPUPerMB is this process's CPU time per produced MB: the client, the
	// consumer, the leaders and the followers' fetchers together.
	CPUPerMB time.Duration `json:"cpuPerMBNs"`
}

// CatchUp is the catch-up part: a follower stopped while records were
// produced, then started; it is timed from hosting its replica again to
// holding its leader's log end.
type CatchUp struct {
	// StartSeconds is from the follower's start to it hosting the replica
	// again; Bytes is the record values it then replicated, in Seconds.
	StartSeconds float64 `json:"startSeconds"`
	Bytes        int64   `json:"bytes"`
	Seconds      float64 `json:"seconds"`
	MBPerSec     float64 `json:"mbPerSec"`
	// CPUPerMB is this process's CPU time per replicated MB while only the
	// catch-up ran: the leader serving fetches and the follower's fetcher
	// appending.
	CPUPerMB time.Duration `json:"cpuPerMBNs"`
}

// ProduceReport is everything one `bench produce` run measured.
type ProduceReport struct {
	// LoopbackMBPerSec is one TCP connection's bulk throughput over
	// loopback, measured in the same run: the ceiling.
	LoopbackMBPerSec float64       `json:"loopbackMBPerSec"`
	Cases            []ProduceCase `json:"cases"`
	CatchUp          *CatchUp      `json:"catchUp,omitempty"`
}

// RunProduce measures producing through real Kafka clients into a cluster
// of 3 controllers and cfg.Brokers brokers in this process.
func RunProduce(ctx context.Context, cfg ProduceConfig, progress io.Writer) (ProduceReport, error) {
	var rep ProduceReport
	if err := cfg.Validate(); err != nil {
		return rep, fmt.Errorf("bench produce: %w", err)
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "kraftlab-bench-produce-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	lb, err := measureLoopbackThroughput(time.Second)
	if err != nil {
		return rep, err
	}
	rep.LoopbackMBPerSec = lb
	fmt.Fprintf(progress, "loopback TCP: %.0f MB/s\n", lb)

	c, err := newMetaCluster(cfg.Settings, cfg.Dir, cfg.Brokers)
	if err != nil {
		return rep, err
	}
	defer c.close()
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err = c.start(startCtx)
	cancel()
	if err != nil {
		return rep, err
	}
	rf := int16(min(3, cfg.Brokers))
	prof, err := cfg.Profiles.start()
	if err != nil {
		return rep, err
	}
	defer func() {
		if perr := prof.stop(); perr != nil {
			fmt.Fprintf(progress, "profiles: %v\n", perr)
		}
	}()
	for i, acks := range cfg.Acks {
		for j, size := range cfg.Sizes {
			topic := fmt.Sprintf("bench-%d-%d", i, j)
			if err := c.createTopicsRetrying(ctx, []string{topic}, int32(cfg.Partitions), rf); err != nil {
				return rep, err
			}
			pc, err := runProduceCase(ctx, ProduceWorkload{Seeds: c.brokerSeeds(), Topic: topic, RecordBytes: size, Acks: acks, Duration: cfg.Duration})
			if err != nil {
				return rep, fmt.Errorf("%d B, acks=%s: %w", size, acks, err)
			}
			pc.OfLoopback = pc.MBPerSec / lb
			rep.Cases = append(rep.Cases, pc)
			fmt.Fprintf(progress, "%s acks=%s: %.0f records/s, %.1f MB/s, end to end p50 %v\n", fmtSize(size), acks, pc.RecordsPerSec, pc.MBPerSec, pc.EndToEnd.P50)
		}
	}
	if cfg.CatchUpBytes > 0 && cfg.Brokers >= 2 {
		cu, err := runCatchUp(ctx, c, cfg)
		if err != nil {
			return rep, fmt.Errorf("catch-up: %w", err)
		}
		rep.CatchUp = &cu
		fmt.Fprintf(progress, "catch-up of %s: %.2f s, %.0f MB/s\n", fmtSize(int(cu.Bytes)), cu.Seconds, cu.MBPerSec)
	}
	return rep, nil
}

// brokerSeeds are the running brokers' listeners.
func (c *metaCluster) brokerSeeds() []string {
	var out []string
	for _, id := range c.brokers {
		if n := c.group.Server(id); n.Running() {
			out = append(out, n.Addr())
		}
	}
	return out
}

// benchProducer is a kgo producer of the benchmark's records: idempotent
// under acks=all, as Kafka's clients are by default (idempotence needs
// acks=all).
func (c *metaCluster) benchProducer(topic string, acks Acks) (*kgo.Client, error) {
	return benchProducer(c.brokerSeeds(), topic, acks)
}

func benchProducer(seeds []string, topic string, acks Acks) (*kgo.Client, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(acks.kgo()), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(produceBuffered), kgo.ClientID("kraftlab-bench-produce")}
	if acks != AcksAll {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return kgo.NewClient(opts...)
}

// runProduceCase produces records of w.RecordBytes for w.Duration while a
// consumer reads them back.
func runProduceCase(ctx context.Context, w ProduceWorkload) (ProduceCase, error) {
	topic, size, acks, cpuTime := w.Topic, w.RecordBytes, w.Acks, w.cpuMeter()
	pc := ProduceCase{RecordBytes: size, Acks: acks}
	prod, err := benchProducer(w.Seeds, topic, acks)
	if err != nil {
		return pc, err
	}
	defer prod.Close()
	partitions, err := waitTopicEverywhere(ctx, prod, topic)
	if err != nil {
		return pc, err
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(w.Seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ClientID("kraftlab-bench-consume"))
	if err != nil {
		return pc, err
	}
	defer cons.Close()

	produceLat, e2e := newHistogram(), newHistogram()
	var acked, failed atomic.Int64
	var firstErr atomic.Value
	var mu sync.Mutex // guards produceLat: promises run on kgo's goroutines
	var read atomic.Int64
	consumed := make(chan int64, 1)
	consCtx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	go func() {
		var n int64
		for consCtx.Err() == nil {
			fs := cons.PollFetches(consCtx)
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				if len(r.Value) >= 8 {
					// The warm-up records are read but not timed: they wait
					// for the new partitions' followers to start fetching
					// and the clock had not started.
					if string(r.Key) != warmUpKey {
						e2e.record(now.Sub(time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))))
					}
					n++
					read.Add(1)
				}
			})
		}
		consumed <- n
	}()

	// Warm up: the client learns the new topic's leaders, and every
	// partition's followers replicate a record, before the clock starts.
	v := recordValue(size, 0, time.Now())
	if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(warmUpKey), Value: v}).FirstErr(); err != nil {
		return pc, fmt.Errorf("warm-up: %w", err)
	}
	if err := warmUpFollowers(ctx, w.Seeds, topic, partitions, size); err != nil {
		return pc, err
	}
	warm := int64(1 + partitions)
	cpu0, cpuOK0 := cpuTime()
	start := time.Now()
	var last atomic.Int64 // unix ns of the last acknowledgement
	for n := int64(1); time.Since(start) < w.Duration && ctx.Err() == nil && failed.Load() == 0; n++ {
		sent := time.Now()
		v := recordValue(size, n, sent)
		prod.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				if failed.Add(1) == 1 {
					firstErr.Store(err)
				}
				return
			}
			now := time.Now()
			mu.Lock()
			produceLat.record(now.Sub(sent))
			mu.Unlock()
			acked.Add(1)
			last.Store(now.UnixNano())
		})
	}
	if err := prod.Flush(ctx); err != nil {
		return pc, fmt.Errorf("flush: %w", err)
	}
	if n := failed.Load(); n > 0 {
		return pc, fmt.Errorf("%d records failed, the first: %v", n, firstErr.Load())
	}
	pc.Records = acked.Load()
	pc.Seconds = time.Unix(0, last.Load()).Sub(start).Seconds()
	cpu1, cpuOK1 := cpuTime()
	// The consumer must read every acknowledged record.
	err = waitUntil(ctx, "the consumer to read every record", func() bool { return read.Load() >= warm+pc.Records })
	stopConsumer()
	<-consumed
	if err != nil {
		return pc, err
	}
	pc.RecordsPerSec = float64(pc.Records) / pc.Seconds
	pc.MBPerSec = pc.RecordsPerSec * float64(size) / 1e6
	pc.Produce, pc.EndToEnd = produceLat.summary(), e2e.summary()
	if mb := float64(pc.Records) * float64(size) / 1e6; mb > 0 && cpuOK0 && cpuOK1 {
		pc.CPUPerMB = time.Duration(float64(cpu1-cpu0) / mb)
	}
	return pc, nil
}

// runCatchUp stops a follower of a one-partition topic, produces
// cfg.CatchUpBytes with acks=1, starts the follower again and times it
// until its replica holds the leader's log end.
func runCatchUp(ctx context.Context, c *metaCluster, cfg ProduceConfig) (CatchUp, error) {
	cu := CatchUp{}
	const topic = "bench-catch-up"
	rf := int16(min(3, cfg.Brokers))
	if err := c.createTopicsRetrying(ctx, []string{topic}, 1, rf); err != nil {
		return cu, err
	}
	replica := func(id int32) (server.ReplicaStats, bool) {
		n := c.group.Server(id)
		if !n.Running() || n.ReplicaManager() == nil {
			return server.ReplicaStats{}, false
		}
		for _, r := range n.ReplicaManager().Stats().Partitions {
			if r.Topic == topic {
				return r, true
			}
		}
		return server.ReplicaStats{}, false
	}
	var leader, follower int32 = -1, -1
	if err := waitUntil(ctx, "the catch-up topic's leader", func() bool {
		for _, id := range c.brokers {
			if r, ok := replica(id); ok && r.LeaderID == id && len(r.ISR) == int(rf) {
				leader = id
				return true
			}
		}
		return false
	}); err != nil {
		return cu, err
	}
	for _, id := range c.brokers {
		if id != leader {
			follower = id
			break
		}
	}
	// What the follower holds when it stops is where its catch-up starts:
	// its log does not move while it is down.
	fs, _ := replica(follower)
	from := fs.LogEndOffset
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	err := c.group.Server(follower).Stop(stopCtx)
	cancel()
	if err != nil {
		return cu, fmt.Errorf("stop broker %d: %w", follower, err)
	}
	prod, err := c.benchProducer(topic, AcksLeader)
	if err != nil {
		return cu, err
	}
	const size = 1024
	for produced := int64(0); produced < cfg.CatchUpBytes; produced += size {
		prod.Produce(ctx, &kgo.Record{Value: recordValue(size, produced/size, time.Now())}, nil)
	}
	err = prod.Flush(ctx)
	prod.Close()
	if err != nil {
		return cu, fmt.Errorf("produce: %w", err)
	}
	lr, _ := replica(leader)
	end := lr.LogEndOffset
	started := time.Now()
	if err := c.group.Start(ctx, c.group.Server(follower)); err != nil {
		return cu, err
	}
	// The clock starts once the broker hosts the replica again (it
	// registered, was unfenced and applied the metadata): what follows is
	// replication alone. A catch-up small enough to end before the
	// replica is first seen hosted is timed from the start instead, an
	// upper bound.
	var hosted server.ReplicaStats
	if err := waitUntil(ctx, "broker "+strconv.Itoa(int(follower))+" to host its replica", func() bool {
		var ok bool
		hosted, ok = replica(follower)
		return ok
	}); err != nil {
		return cu, err
	}
	cu.StartSeconds = time.Since(started).Seconds()
	cpu0, _ := cpuTime()
	start := time.Now()
	if hosted.LogEndOffset >= end {
		start = started
	}
	if err := waitUntil(ctx, "broker "+strconv.Itoa(int(follower))+" to catch up", func() bool {
		r, ok := replica(follower)
		return ok && r.LogEndOffset >= end
	}); err != nil {
		return cu, err
	}
	took := time.Since(start)
	cpu1, _ := cpuTime()
	fr, _ := replica(follower)
	cu.Bytes = (end - from) * size
	cu.Seconds = took.Seconds()
	cu.MBPerSec = float64(cu.Bytes) / 1e6 / cu.Seconds
	cu.CPUPerMB = time.Duration(float64(cpu1-cpu0) / (float64(cu.Bytes) / 1e6))
	if fr.LogEndOffset < end {
		return cu, fmt.Errorf("broker %d ends at %d, its leader at %d", follower, fr.LogEndOffset, end)
	}
	return cu, nil
}
