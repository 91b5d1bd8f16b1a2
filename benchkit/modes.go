package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// Push versus pull on one engine: the same quorum (Kafka's quorum timing,
// linger 0, flush never) replicating by pull (Kafka's) and by push
// (classic Raft), with 0 or more observers (brokers), the rest alike.

// ModesConfig is one run of `bench quorum --quorum ... --observers ...`.
type ModesConfig struct {
	Modes     []raft.Replication `json:"-"`
	Observers []int              `json:"observers"`
	Sizes     []int              `json:"recordBytes"`
	Writers   []int              `json:"writers"`
	Warmup    time.Duration      `json:"warmupNs"`
	Window    time.Duration      `json:"windowNs"`
	Dir       string             `json:"dataDir"`
}

// MaxObservers bounds --observers: each is a whole broker in this process.
const MaxObservers = 500

// ParseModes reads --quorum and --observers.
func ParseModes(quorum, observers string) ([]raft.Replication, []int, error) {
	var modes []raft.Replication
	for _, s := range splitList(quorum) {
		m, err := raft.ParseReplication(s)
		if err != nil {
			return nil, nil, fmt.Errorf("--quorum: %q is neither pull nor push", s)
		}
		modes = append(modes, m)
	}
	if len(modes) == 0 {
		return nil, nil, errors.New("--quorum: name pull, push or both")
	}
	obs, err := parseInts("--observers", observers, 0, MaxObservers, false)
	if err != nil {
		return nil, nil, err
	}
	if len(obs) == 0 {
		return nil, nil, errors.New("--observers: name at least one count, such as 0")
	}
	return modes, obs, nil
}

// Modes builds a ModesConfig from the flags' sizes, writers, warm-up,
// window and folder; sizes is the record sizes to use when --sizes was
// not given (nil: the flag's).
func (f *Flags) Modes(modes []raft.Replication, observers, sizes []int) (ModesConfig, error) {
	cfg, err := f.Config(KraftlabFactories())
	if err != nil {
		return ModesConfig{}, err
	}
	if len(cfg.Writers) == 0 {
		return ModesConfig{}, errors.New("--writers: name at least one writer count")
	}
	if sizes == nil {
		sizes = cfg.Sizes
	}
	return ModesConfig{Modes: modes, Observers: observers, Sizes: sizes, Writers: cfg.Writers, Warmup: cfg.Warmup, Window: cfg.Window, Dir: cfg.Dir}, nil
}

// ModeResult is one mode's figures with some observers, one record size
// and one writer count.
type ModeResult struct {
	Mode          string  `json:"mode"`
	Observers     int     `json:"observers"`
	RecordBytes   int     `json:"recordBytes"`
	Writers       int     `json:"writers"`
	Records       int64   `json:"records"`
	RecordsPerSec float64 `json:"recordsPerSec"`
	Latency       Latency `json:"latency"`
	// MessagesPerRecord and BytesPerRecord are the quorum's requests and
	// responses (every node's, observers' included) over the window per
	// committed record; with one writer each record is one commit.
	MessagesPerRecord float64 `json:"messagesPerRecord"`
	BytesPerRecord    float64 `json:"bytesPerRecord"`
	// CPUSecondsPerRecord is the whole process's CPU (voters, observers,
	// writers) per committed record: Go does not account CPU per
	// goroutine, so the leader's own share is not measured.
	CPUSecondsPerRecord *float64 `json:"cpuSecondsPerRecord,omitempty"`
	Error               string   `json:"error,omitempty"`
}

// RunModes runs every mode × observers × size × writers case, each on a
// fresh quorum; a failing case is reported in its row and the run goes on.
func RunModes(ctx context.Context, cfg ModesConfig, progress io.Writer) ([]ModeResult, error) {
	kafka, _ := cluster.ProfileSettings(cluster.ProfileKafka)
	kafka.AppendLinger = 0
	var out []ModeResult
	for _, obs := range cfg.Observers {
		for _, size := range cfg.Sizes {
			for _, w := range cfg.Writers {
				// The modes back to back, so that drifts in the
				// machine's load hit both alike.
				for _, mode := range cfg.Modes {
					if err := ctx.Err(); err != nil {
						return out, fmt.Errorf("interrupted: %w", err)
					}
					fmt.Fprintf(progress, "run: %s, %d observers, %5d B, %s\n", mode, obs, size, load{Writers: w})
					st := kafka
					st.Replication = mode
					out = append(out, runMode(ctx, cfg, NewKraftlabObserved("kraftlab-"+mode.String(), st, obs), size, w))
				}
			}
		}
	}
	return out, nil
}

// runMode starts sys, drives one closed-loop case and stops it.
func runMode(ctx context.Context, cfg ModesConfig, sys *Kraftlab, size, writers int) ModeResult {
	r := ModeResult{Mode: sys.settings.Replication.String(), Observers: sys.observers, RecordBytes: size, Writers: writers}
	dir, err := os.MkdirTemp(cfg.Dir, sys.Name()+"-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	runtime.GC()
	if err := sys.Start(dir, false); err != nil {
		r.Error = err.Error()
		return r
	}
	m, runErr := drive(ctx, sys, size, load{Writers: writers}, timing{Warmup: cfg.Warmup, Window: cfg.Window, Drain: defaultDrain})
	r.Error = caseError(ctx, runErr, sys.Close())
	if r.Error == "" && m.FirstErr != nil {
		r.Error = fmt.Sprintf("%d proposals failed, the first: %v", m.Errors, m.FirstErr)
	}
	r.Records, r.Latency = m.Records, m.Latency
	if secs := m.Window.Seconds(); secs > 0 {
		r.RecordsPerSec = float64(m.Records) / secs
	}
	if m.Records > 0 {
		n := float64(m.Records)
		r.MessagesPerRecord = float64(m.Wire.Messages) / n
		r.BytesPerRecord = float64(m.Wire.Bytes) / n
		if m.CPUKnown {
			v := m.CPU.Seconds() / n
			r.CPUSecondsPerRecord = &v
		}
	}
	return r
}

// WriteModesTable prints the results, one row a case, and for each case of
// push the ratio pull ÷ push of records/s and p50.
func WriteModesTable(w io.Writer, rs []ModeResult) error {
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "mode\tobservers\tsize\twriters\trecords/s\tp50\tp99\tmsgs/record\tbytes/record\tprocess CPU µs/record\t")
	for _, r := range rs {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\terror: %s\t\t\t\t\t\t\n", r.Mode, r.Observers, fmtSize(r.RecordBytes), r.Writers, r.Error)
			continue
		}
		cpu := "-"
		if r.CPUSecondsPerRecord != nil {
			cpu = sig3(*r.CPUSecondsPerRecord * 1e6)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Mode, r.Observers, fmtSize(r.RecordBytes), r.Writers,
			strconv.FormatFloat(r.RecordsPerSec, 'f', 0, 64), fmtDur(r.Latency.P50), fmtDur(r.Latency.P99),
			sig3(r.MessagesPerRecord), strconv.FormatFloat(r.BytesPerRecord, 'f', 0, 64), cpu)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nmsgs and bytes per record: every quorum request and response on the wire (voters' and observers'), over the committed records; with 1 writer a record is a commit.\nCPU: the whole process (voters, observers as whole brokers, writers) per record; Go does not account CPU per goroutine, so the leader's share is not separated.")
	return err
}
