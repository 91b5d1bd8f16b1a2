package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
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
	// writers) per committed record.
	CPUSecondsPerRecord *float64 `json:"cpuSecondsPerRecord,omitempty"`
	// LeaderCPUSecondsPerRecord, FollowerCPUSecondsPerRecord (the
	// followers' mean) and ObserversCPUSecondsPerRecord (all of them
	// together) split it by node, from a CPU profile of the window
	// (nodecpu.go); nil when the profile could not run.
	LeaderCPUSecondsPerRecord    *float64 `json:"leaderCpuSecondsPerRecord,omitempty"`
	FollowerCPUSecondsPerRecord  *float64 `json:"followerCpuSecondsPerRecord,omitempty"`
	ObserversCPUSecondsPerRecord *float64 `json:"observersCpuSecondsPerRecord,omitempty"`
	// Legs splits a single writer's commits into their legs (legs.go);
	// nil with more writers.
	Legs  *Legs  `json:"legs,omitempty"`
	Error string `json:"error,omitempty"`
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
	m, runErr := drive(ctx, sys, size, load{Writers: writers}, timing{Warmup: cfg.Warmup, Window: cfg.Window, Drain: defaultDrain, NodeCPU: true, Legs: true})
	leader := sys.LeaderID()
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
		if m.NodesKnown {
			r.splitCPU(m.Nodes, leader, len(sys.voterIDs())-1, n)
		}
		if m.Legs != nil {
			followers := slices.DeleteFunc(sys.voterIDs(), func(id int32) bool { return id == leader })
			l := m.Legs.split(leader, followers, size)
			r.Legs = &l
		}
	}
	return r
}

// splitCPU fills the per-node CPU figures from a window's profile; a node
// the profile caught no sample of used less than its resolution.
func (r *ModeResult) splitCPU(c nodeCPU, leader int32, nFollowers int, records float64) {
	var lead, followers, observers time.Duration
	for id, d := range c.ByNode {
		switch {
		case id == leader:
			lead += d
		case id >= firstObserverID:
			observers += d
		default:
			followers += d
		}
	}
	per := func(d time.Duration) *float64 { v := d.Seconds() / records; return &v }
	r.LeaderCPUSecondsPerRecord = per(lead)
	if nFollowers > 0 {
		r.FollowerCPUSecondsPerRecord = per(followers / time.Duration(nFollowers))
	}
	if r.Observers > 0 {
		r.ObserversCPUSecondsPerRecord = per(observers)
	}
}

// writeLegs prints the single-writer rows' legs, if any.
func writeLegs(w io.Writer, rs []ModeResult) error {
	if !slices.ContainsFunc(rs, func(r ModeResult) bool { return r.Legs != nil }) {
		return nil
	}
	fmt.Fprintln(w, "\nOne writer's commit, leg by leg (the median of each leg; a commit's legs add up to its latency):")
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "mode\tobservers\twait for a Fetch\tleader: to the send\tto the follower\tfollower: to its ack\tto the leader\tleader: to the writer\tsum\tcommit p50\tcommits split\t")
	for _, r := range rs {
		l := r.Legs
		if l == nil || r.Error != "" {
			continue
		}
		wait := fmtDur(l.WaitFetch)
		if r.Mode == raft.Push.String() {
			wait = "-"
		}
		sum := l.WaitFetch + l.LeaderSend + l.ToFollower + l.Follower + l.ToLeader + l.LeaderCommit
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d of %d\t\n", r.Mode, r.Observers, wait, fmtDur(l.LeaderSend), fmtDur(l.ToFollower),
			fmtDur(l.Follower), fmtDur(l.ToLeader), fmtDur(l.LeaderCommit), fmtDur(sum), fmtDur(r.Latency.P50), l.Split, l.Commits)
	}
	return tw.Flush()
}

// micros prints seconds per record as µs, or - when unknown.
func micros(v *float64) string {
	if v == nil {
		return "-"
	}
	return sig3(*v * 1e6)
}

// WriteModesTable prints the results, one row a case, and for each case of
// push the ratio pull ÷ push of records/s and p50.
func WriteModesTable(w io.Writer, rs []ModeResult) error {
	tw := newTabWriter(w)
	// What tells the designs apart comes first, so that a narrow pane (a
	// lesson's output) shows it.
	fmt.Fprintln(tw, "mode\tobservers\twriters\tmsgs/record\tCPU µs/record: leader\tfollower\tobservers\tprocess\trecords/s\tp50\tp99\tbytes/record\tsize\t")
	for _, r := range rs {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\terror: %s\t\t\t\t\t\t\t\t\t%s\t\n", r.Mode, r.Observers, r.Writers, r.Error, fmtSize(r.RecordBytes))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Mode, r.Observers, r.Writers, sig3(r.MessagesPerRecord),
			micros(r.LeaderCPUSecondsPerRecord), micros(r.FollowerCPUSecondsPerRecord), micros(r.ObserversCPUSecondsPerRecord), micros(r.CPUSecondsPerRecord),
			strconv.FormatFloat(r.RecordsPerSec, 'f', 0, 64), fmtDur(r.Latency.P50), fmtDur(r.Latency.P99),
			strconv.FormatFloat(r.BytesPerRecord, 'f', 0, 64), fmtSize(r.RecordBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeLegs(w, rs); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nmsgs and bytes per record: every quorum request and response on the wire (voters' and observers'), over the committed records; with 1 writer a record is a commit.\nCPU per record: the leader's, one follower's (their mean) and all observers' together, from a CPU profile of the window in which each node's goroutines carry a label naming it (100 samples/s, each standing for 10 ms of CPU, so a node with few samples is known roughly; background GC and the writers are in none of them); process: the whole process's (voters, observers as whole brokers, writers).")
	return err
}
