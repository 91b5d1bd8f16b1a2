// Command bench runs kraftlab's benchmarks against Apache Kafka 4.4 as the
// peer, in one run, one system at a time:
//
//	go run ./cmd/bench produce --peers kafka
//
// measures produce throughput, end-to-end latency and CPU per MB, metadata
// propagation and controller failover on a kraftlab playground (flush
// never, then flush always) and on an Apache Kafka cluster of the same
// shape, and prints one table with the ratios. It needs java (and mvn the
// first time, to fetch Kafka's jars) and go on PATH.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
	"github.com/kraftlab/kraftlab/interop"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 || args[0] != "produce" {
		return errors.New("usage: bench produce --peers kafka [flags] (see bench produce -h)")
	}
	cfg := interop.DefaultPeerConfig()
	fs := flag.NewFlagSet("bench produce", flag.ContinueOnError)
	peers := fs.String("peers", "kafka", "the peer system: kafka (Apache Kafka "+interop.KafkaVersion+")")
	sizes := fs.String("sizes", "100,1024", "record value sizes in bytes, comma-separated")
	acks := fs.String("acks", "all", "acks settings, comma-separated: all, 1")
	parts := fs.String("parts", "produce,propagation,failover", "what to measure, comma-separated")
	systems := fs.String("systems", "kraftlab,kraftlab-fsync,kafka", "systems in the order they run: kraftlab (flush never), kraftlab-fsync (flush always), kafka")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "each produce case's length")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "the discarded 1 KiB warm-up case before each system's measured ones")
	fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "partitions of each produce case's topic")
	fs.IntVar(&cfg.Changes, "changes", cfg.Changes, "metadata changes propagation times")
	fs.IntVar(&cfg.FailoverRounds, "failovers", cfg.FailoverRounds, "how many times failover kills the active controller")
	fs.StringVar(&cfg.Heap, "heap", cfg.Heap, "each Kafka JVM's -Xmx and -Xms")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *peers != "kafka" {
		return fmt.Errorf("--peers %q: the only peer is kafka", *peers)
	}
	var err error
	if cfg.Sizes, err = ints(*sizes); err != nil {
		return fmt.Errorf("--sizes: %w", err)
	}
	cfg.Acks = nil
	for _, a := range strings.Split(*acks, ",") {
		x, err := benchkit.ParseAcks(a)
		if err != nil {
			return fmt.Errorf("--acks: %w", err)
		}
		cfg.Acks = append(cfg.Acks, x)
	}
	cfg.Parts = nil
	for _, p := range strings.Split(*parts, ",") {
		x, err := interop.ParsePeerPart(p)
		if err != nil {
			return fmt.Errorf("--parts: %w", err)
		}
		cfg.Parts = append(cfg.Parts, x)
	}
	cfg.Systems = nil
	for _, s := range strings.Split(*systems, ",") {
		cfg.Systems = append(cfg.Systems, interop.PeerSystem(s))
	}
	if err := cfg.Validate(); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	k, err := interop.Setup(ctx)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kraftlab-peer-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "main.go")); err != nil {
		return fmt.Errorf("run from the interop folder: no kraftlab main.go in %s", root)
	}
	bin, err := interop.BuildKraftlab(ctx, root, tmp)
	if err != nil {
		return err
	}
	cfg.Dir = filepath.Join(tmp, "data")
	start := time.Now()
	rep, runErr := interop.RunPeers(ctx, k, bin, cfg, os.Stderr)
	fmt.Fprintf(os.Stderr, "took %v\n\n", time.Since(start).Round(time.Second))
	if err := interop.WritePeerTable(os.Stdout, cfg, rep); err != nil {
		return err
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return runErr
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
