package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Config is one `bench quorum` run's matrix and timing.
type Config struct {
	// Systems run in this order; the first is the reference of the ratio
	// columns.
	Systems    []Factory     `json:"-"`
	Flushes    []bool        `json:"-"` // false: flush never, true: flush always
	Sizes      []int         `json:"recordBytes"`
	Writers    []int         `json:"writers"`
	Rates      []int         `json:"openLoopRatesFlushNever"`
	FsyncRates []int         `json:"openLoopRatesFlushAlways"`
	Warmup     time.Duration `json:"warmupNs"`
	Window     time.Duration `json:"windowNs"`
	FloorTime  time.Duration `json:"floorNs"`
	Dir        string        `json:"dataDir"`
	// Profiles are the files the run writes Go's profiles of it to.
	Profiles Profiles `json:"-"`
}

// caseKey names one figure: every system runs it once.
type caseKey struct {
	Durable bool
	Size    int
	Load    load
}

func flushName(durable bool) string {
	if durable {
		return "always"
	}
	return "never"
}

// Result is one system's numbers for one case.
type Result struct {
	System        string  `json:"system"`
	Flush         string  `json:"flush"`
	RecordBytes   int     `json:"recordBytes"`
	Writers       int     `json:"writers,omitempty"`
	RatePerSec    int     `json:"ratePerSec,omitempty"`
	WindowSeconds float64 `json:"windowSeconds"`
	Records       int64   `json:"records"`
	Errors        int64   `json:"errors"`
	FirstError    string  `json:"firstError,omitempty"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	MBPerSec      float64 `json:"mbPerSec"`
	Latency       Latency `json:"latency"`
	// LatencyOverFloor is p50 commit latency divided by the matching floor's
	// p50: the loopback round trip for flush never, one fsync for flush always.
	LatencyOverFloor    float64  `json:"p50OverFloor,omitempty"`
	CPUSecondsPerRecord *float64 `json:"cpuSecondsPerRecord,omitempty"`
	// ProcessCores is the process's CPU over the window divided by the
	// window: how many cores all the voters (and the writers driving them)
	// kept busy together. They share one process and Go does not account
	// CPU per goroutine, so no per-voter split is measured.
	ProcessCores *float64 `json:"processCores,omitempty"`
	// Machine is how busy the machine's cores were over the window, every
	// process included.
	Machine         *MachineLoad `json:"machine,omitempty"`
	AllocsPerRecord float64      `json:"allocsPerRecord"`
	// VsReference holds reference ÷ this system for the same case.
	VsReference *Ratios `json:"vsReference,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// Ratios compare the reference system with another on one case, as
// reference ÷ other: above 1 for records/s, or below 1 for latency and CPU,
// favours the reference.
type Ratios struct {
	RecordsPerSec float64 `json:"recordsPerSec"`
	P50           float64 `json:"p50"`
	P99           float64 `json:"p99"`
	CPUPerRecord  float64 `json:"cpuPerRecord,omitempty"`
}

func (r Result) key() caseKey {
	return caseKey{Durable: r.Flush == "always", Size: r.RecordBytes, Load: load{Writers: r.Writers, Rate: r.RatePerSec}}
}

// Report is everything one run measured; --json prints it as is.
type Report struct {
	Machine   Machine  `json:"machine"`
	Config    Config   `json:"config"`
	Floors    Floors   `json:"floors"`
	Reference string   `json:"reference"`
	Results   []Result `json:"results"`
}

// Machine describes where a run took place.
type Machine struct {
	GoVersion  string `json:"goVersion"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu,omitempty"`
	NumCPU     int    `json:"numCPU"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

func describeMachine() Machine {
	m := Machine{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	return m
}

// cases lists the matrix in run order. Each case runs every system back to
// back, so slow drifts in the machine's load hit all systems alike.
func (c Config) cases() []caseKey {
	var out []caseKey
	for _, durable := range c.Flushes {
		rates := c.Rates
		if durable {
			rates = c.FsyncRates
		}
		for _, size := range c.Sizes {
			for _, w := range c.Writers {
				out = append(out, caseKey{Durable: durable, Size: size, Load: load{Writers: w}})
			}
			for _, r := range rates {
				out = append(out, caseKey{Durable: durable, Size: size, Load: load{Rate: r}})
			}
		}
	}
	return out
}

// Run measures the floors, then every case on every system, each on a
// fresh cluster. A failing case is reported in its row and the run goes on;
// progress lines go to progress. Cancelling ctx stops the run between
// cases and cuts the running one short; the report then holds what ran.
func Run(ctx context.Context, cfg Config, progress io.Writer) (Report, error) {
	if len(cfg.Systems) == 0 {
		return Report{}, errors.New("bench quorum: no system to run")
	}
	rep := Report{Machine: describeMachine(), Config: cfg, Reference: cfg.Systems[0].Name}
	var err error
	fmt.Fprintf(progress, "floor: loopback TCP round trip...\n")
	if rep.Floors.RTT, err = measureRTT(cfg.FloorTime); err != nil {
		return rep, err
	}
	fmt.Fprintf(progress, "floor: fsync in %s...\n", cfg.Dir)
	if rep.Floors.Fsync, err = measureFsync(cfg.Dir, cfg.FloorTime); err != nil {
		return rep, err
	}
	fmt.Fprintf(progress, "floor: %d fsyncs at once in %s...\n", DefaultVoters, cfg.Dir)
	if rep.Floors.MajorityFsync, err = measureMajorityFsync(cfg.Dir, DefaultVoters, cfg.FloorTime); err != nil {
		return rep, err
	}
	seen := map[int]bool{}
	for _, k := range cfg.cases() {
		if r := k.Load.Rate; r > 0 && !seen[r] {
			seen[r] = true
			fmt.Fprintf(progress, "floor: open-loop scheduler at %d/s...\n", r)
			l, err := measureOpenLoop(ctx, r, cfg.FloorTime)
			if err != nil {
				return rep, err
			}
			rep.Floors.OpenLoop = append(rep.Floors.OpenLoop, RateFloor{Rate: r, Latency: l})
		}
	}
	defer rep.compare()
	for _, k := range cfg.cases() {
		for _, f := range cfg.Systems {
			if err := ctx.Err(); err != nil {
				return rep, fmt.Errorf("interrupted: %w", err)
			}
			fmt.Fprintf(progress, "run: %-15s flush %-6s %5d B  %s\n", f.Name, flushName(k.Durable), k.Size, k.Load)
			rep.Results = append(rep.Results, runCase(ctx, cfg, f, k))
		}
	}
	return rep, nil
}

// runCase starts a fresh cluster of one system, drives one case and stops it.
func runCase(ctx context.Context, cfg Config, f Factory, k caseKey) Result {
	r := Result{
		System:      f.Name,
		Flush:       flushName(k.Durable),
		RecordBytes: k.Size,
		Writers:     k.Load.Writers,
		RatePerSec:  k.Load.Rate,
	}
	dir, err := os.MkdirTemp(cfg.Dir, f.Name+"-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	runtime.GC() // leave the previous case's garbage out of this window
	sys := f.New()
	if err := sys.Start(dir, k.Durable); err != nil {
		r.Error = err.Error()
		return r
	}
	m, runErr := drive(ctx, sys, k.Size, k.Load, timing{Warmup: cfg.Warmup, Window: cfg.Window, Drain: defaultDrain})
	r.Error = caseError(ctx, runErr, sys.Close())
	secs := m.Window.Seconds()
	r.WindowSeconds = secs
	r.Records = m.Records
	r.Errors = m.Errors
	if m.FirstErr != nil {
		r.FirstError = m.FirstErr.Error()
	}
	r.Latency = m.Latency
	if secs > 0 {
		r.RecordsPerSec = float64(m.Records) / secs
		r.MBPerSec = r.RecordsPerSec * float64(k.Size) / 1e6
	}
	if m.CPUKnown && secs > 0 {
		v := m.CPU.Seconds() / secs
		r.ProcessCores = &v
	}
	if m.MachineKnown {
		v := m.Machine
		r.Machine = &v
	}
	if m.Records > 0 {
		if m.CPUKnown {
			v := m.CPU.Seconds() / float64(m.Records)
			r.CPUSecondsPerRecord = &v
		}
		r.AllocsPerRecord = float64(m.Mallocs) / float64(m.Records)
	}
	return r
}

// compare fills each result's latency over its floor and its ratios against
// the reference system's result for the same case.
func (rep *Report) compare() {
	refs := map[caseKey]Result{}
	for i := range rep.Results {
		r := &rep.Results[i]
		floor := rep.Floors.RTT.P50
		if r.Flush == flushName(true) {
			floor = rep.Floors.Fsync.P50
		}
		if floor > 0 && r.Latency.Count > 0 {
			r.LatencyOverFloor = float64(r.Latency.P50) / float64(floor)
		}
	}
	for _, r := range rep.Results {
		if r.System == rep.Reference && r.Error == "" {
			refs[r.key()] = r
		}
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		ref, ok := refs[r.key()]
		if !ok || r.System == rep.Reference || r.Error != "" {
			continue
		}
		v := &Ratios{
			RecordsPerSec: div(ref.RecordsPerSec, r.RecordsPerSec),
			P50:           div(float64(ref.Latency.P50), float64(r.Latency.P50)),
			P99:           div(float64(ref.Latency.P99), float64(r.Latency.P99)),
		}
		if ref.CPUSecondsPerRecord != nil && r.CPUSecondsPerRecord != nil {
			v.CPUPerRecord = div(*ref.CPUSecondsPerRecord, *r.CPUSecondsPerRecord)
		}
		r.VsReference = v
	}
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// caseError says why a case's figures cannot stand: its run failed, was
// interrupted, or its system did not close; "" when they can.
func caseError(ctx context.Context, runErr, closeErr error) string {
	switch {
	case runErr != nil:
		return runErr.Error()
	case ctx.Err() != nil:
		return "interrupted"
	case closeErr != nil:
		return fmt.Sprintf("close: %v", closeErr)
	}
	return ""
}
