// Command bench compares kraftlab's pull-based KRaft quorum with
// hashicorp/raft and etcd raft: the same workload on the same machine in
// the same run, so the machine's noise cancels out in the ratios.
//
// It is its own Go module so that the kraftlab binary does not depend on
// the peers. Run it from this directory:
//
//	go run . quorum [--json] [--duration D] [--systems hashicorp,etcd] ...
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks a bad command line; run prints usage and exits 2.
var errUsage = errors.New("usage")

// run executes one command line and returns the exit code: 0 when every
// case ran, 1 when a case or a floor failed, 2 for a bad command line.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "quorum" {
		fmt.Fprintln(stderr, "usage: go run . quorum [flags]   (run `go run . quorum -h` for the flags)")
		return 2
	}
	cfg, asJSON, err := parseQuorum(args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench quorum: %v\n", err)
		return 2
	}
	cleanup := func() {}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "kraftlab-bench-")
		if err != nil {
			fmt.Fprintf(stderr, "bench quorum: %v\n", err)
			return 1
		}
		cfg.Dir = dir
		cleanup = func() { os.RemoveAll(dir) }
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "bench quorum: data dir: %v\n", err)
		return 2
	}
	defer cleanup()

	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintf(stderr, "bench quorum: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "bench quorum: cpu profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}

	rep, err := runQuorum(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench quorum: %v\n", err)
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = writeTable(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench quorum: write report: %v\n", err)
		return 1
	}
	for _, r := range rep.Results {
		if r.Error != "" {
			fmt.Fprintf(stderr, "bench quorum: %s flush %s %s %s failed: %s\n",
				r.System, r.Flush, fmtSize(r.RecordBytes), r.key().Load, r.Error)
			return 1
		}
	}
	return 0
}

// parseQuorum reads the quorum command's flags.
func parseQuorum(args []string, stderr io.Writer) (quorumConfig, bool, error) {
	fs := flag.NewFlagSet("quorum", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		asJSON     = fs.Bool("json", false, "print the report as JSON")
		systems    = fs.String("systems", "", "comma-separated systems to run, the first being the reference of the ratio columns (default: all, kraftlab first when built in)")
		flush      = fs.String("flush", "never,always", "flush policies: never (log in memory), always (synced before it counts)")
		sizes      = fs.String("sizes", "16,256,4096", "record sizes in bytes (a K or KiB suffix multiplies by 1024)")
		writers    = fs.String("writers", "1,64", "closed-loop writer counts")
		rates      = fs.String("rate", "10000", "open-loop rates in records/s with flush never (0 for none)")
		fsyncRates = fs.String("rate-fsync", "1000", "open-loop rates in records/s with flush always (0 for none)")
		warmup     = fs.Duration("warmup", 500*time.Millisecond, "warm-up before each measured window")
		window     = fs.Duration("duration", 2*time.Second, "measured window of each case")
		floorTime  = fs.Duration("floor-duration", time.Second, "time spent measuring each floor")
		cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
		dir        = fs.String("dir", "", "data folder for the durable cases and the fsync floor (default: a fresh temporary folder, removed afterwards)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run . quorum [flags]\n\nRuns 3-voter replicated logs over loopback TCP side by side and prints throughput,\ncommit latency, CPU and allocations per committed record, with ratios to the first system.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return quorumConfig{}, false, err
	}
	if fs.NArg() > 0 {
		return quorumConfig{}, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg := quorumConfig{Warmup: *warmup, Window: *window, FloorTime: *floorTime, Dir: *dir, CPUProfile: *cpuProfile}
	var err error
	if cfg.Systems, err = selectSystems(*systems); err != nil {
		return cfg, false, err
	}
	for _, f := range splitList(*flush) {
		switch f {
		case "never":
			cfg.Flushes = append(cfg.Flushes, false)
		case "always":
			cfg.Flushes = append(cfg.Flushes, true)
		default:
			return cfg, false, fmt.Errorf("--flush: %q is neither never nor always", f)
		}
	}
	if len(cfg.Flushes) == 0 {
		return cfg, false, errors.New("--flush: name never, always or both")
	}
	if cfg.Sizes, err = parseInts("--sizes", *sizes, 1, 16<<20, true); err != nil {
		return cfg, false, err
	}
	if len(cfg.Sizes) == 0 {
		return cfg, false, errors.New("--sizes: name at least one record size")
	}
	if cfg.Writers, err = parseInts("--writers", *writers, 1, 1<<16, false); err != nil {
		return cfg, false, err
	}
	if cfg.Rates, err = parseRates("--rate", *rates); err != nil {
		return cfg, false, err
	}
	if cfg.FsyncRates, err = parseRates("--rate-fsync", *fsyncRates); err != nil {
		return cfg, false, err
	}
	if len(cfg.Writers) == 0 && len(cfg.Rates) == 0 && len(cfg.FsyncRates) == 0 {
		return cfg, false, errors.New("nothing to run: give --writers or a rate")
	}
	if cfg.Warmup < 0 || cfg.Window <= 0 || cfg.FloorTime <= 0 {
		return cfg, false, errors.New("--warmup must be at least 0, --duration and --floor-duration above 0")
	}
	return cfg, *asJSON, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseInts reads a comma-separated list of integers in [lo, hi]; with
// sizes set, a K or KiB suffix multiplies by 1024.
func parseInts(name, s string, lo, hi int, sizes bool) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		mult := 1
		num := f
		if sizes {
			for _, suf := range []string{"KiB", "K", "k"} {
				if n, ok := strings.CutSuffix(f, suf); ok {
					num, mult = n, 1024
					break
				}
			}
		}
		v, err := strconv.Atoi(strings.TrimSpace(num))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", name, f)
		}
		v *= mult
		if v < lo || v > hi {
			return nil, fmt.Errorf("%s: %d is outside %d..%d", name, v, lo, hi)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseRates reads open-loop rates; 0 alone means no open-loop case.
func parseRates(name, s string) ([]int, error) {
	var out []int
	vals, err := parseInts(name, s, 0, 10_000_000, false)
	if err != nil {
		return nil, err
	}
	for _, v := range vals {
		if v > 0 {
			out = append(out, v)
		}
	}
	return out, nil
}
