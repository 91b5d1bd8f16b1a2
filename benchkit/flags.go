package benchkit

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
)

// Flags are the command-line flags of `bench quorum`, shared by the
// kraftlab binary and the bench module so both read the same matrix the
// same way.
type Flags struct {
	JSON       bool
	systems    string
	flush      string
	sizes      string
	writers    string
	rates      string
	fsyncRates string
	warmup     time.Duration
	window     time.Duration
	floorTime  time.Duration
	profiles   Profiles
	dir        string
}

// Register defines the flags on fs; defaultSystems names the systems run
// when --systems is not given, for its help text.
func (f *Flags) Register(fs *flag.FlagSet, defaultSystems string) {
	fs.BoolVar(&f.JSON, "json", false, "print the report as JSON")
	fs.StringVar(&f.systems, "systems", "", "comma-separated systems to run, the first being the reference of the ratio columns (default: "+defaultSystems+")")
	fs.StringVar(&f.flush, "flush", "never,always", "flush policies: never (log not synced), always (synced before it counts)")
	fs.StringVar(&f.sizes, "sizes", "16,256,4096", "record sizes in bytes (a K or KiB suffix multiplies by 1024)")
	fs.StringVar(&f.writers, "writers", "1,64", "closed-loop writer counts")
	fs.StringVar(&f.rates, "rate", "10000", "open-loop rates in records/s with flush never (0 for none)")
	fs.StringVar(&f.fsyncRates, "rate-fsync", "1000", "open-loop rates in records/s with flush always (0 for none)")
	fs.DurationVar(&f.warmup, "warmup", 500*time.Millisecond, "warm-up before each measured window")
	fs.DurationVar(&f.window, "duration", 2*time.Second, "measured window of each case")
	fs.DurationVar(&f.floorTime, "floor-duration", time.Second, "time spent measuring each floor")
	RegisterProfileFlags(fs, &f.profiles, "the whole run")
	fs.StringVar(&f.dir, "dir", "", "data folder for the durable cases and the fsync floor (default: a fresh temporary folder, removed afterwards)")
}

// Config checks the flags and builds the run's Config from them.
func (f *Flags) Config(available []Factory) (Config, error) {
	cfg := Config{Warmup: f.warmup, Window: f.window, FloorTime: f.floorTime, Dir: f.dir, Profiles: f.profiles}
	var err error
	if cfg.Systems, err = SelectSystems(available, f.systems); err != nil {
		return cfg, err
	}
	for _, fl := range splitList(f.flush) {
		switch fl {
		case "never":
			cfg.Flushes = append(cfg.Flushes, false)
		case "always":
			cfg.Flushes = append(cfg.Flushes, true)
		default:
			return cfg, fmt.Errorf("--flush: %q is neither never nor always", fl)
		}
	}
	if len(cfg.Flushes) == 0 {
		return cfg, errors.New("--flush: name never, always or both")
	}
	if cfg.Sizes, err = parseInts("--sizes", f.sizes, cluster.MinLoadRecordBytes, cluster.MaxLoadRecordBytes, true); err != nil {
		return cfg, err
	}
	if len(cfg.Sizes) == 0 {
		return cfg, errors.New("--sizes: name at least one record size")
	}
	if cfg.Writers, err = parseInts("--writers", f.writers, 1, 1<<16, false); err != nil {
		return cfg, err
	}
	if cfg.Rates, err = parseRates("--rate", f.rates); err != nil {
		return cfg, err
	}
	if cfg.FsyncRates, err = parseRates("--rate-fsync", f.fsyncRates); err != nil {
		return cfg, err
	}
	if len(cfg.Writers) == 0 && len(cfg.Rates) == 0 && len(cfg.FsyncRates) == 0 {
		return cfg, errors.New("nothing to run: give --writers or a rate")
	}
	if cfg.Warmup < 0 || cfg.Window <= 0 || cfg.FloorTime <= 0 {
		return cfg, errors.New("--warmup must be at least 0, --duration and --floor-duration above 0")
	}
	return cfg, nil
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
