package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/server"
	"github.com/kraftlab/kraftlab/storage"
)

// Change is how a failover run takes the leadership away.
type Change string

// Leadership changes.
const (
	// ChangeKill kills the leader (Node.Kill, as kill -9): the followers
	// notice only when controller.quorum.fetch.timeout.ms passes without a
	// successful fetch, then elect a new leader.
	ChangeKill Change = "kill"
	// ChangeStop shuts the leader down gracefully (Node.Stop, Kafka's
	// controlled shutdown): it resigns with EndQuorumEpoch and stays until
	// another leader is known.
	ChangeStop Change = "stop"
	// ChangeResign makes the leader resign without stopping (Node.Resign):
	// EndQuorumEpoch, then it votes like any other voter.
	ChangeResign Change = "resign"
)

// Changes lists the leadership changes in report order.
func Changes() []Change { return []Change{ChangeKill, ChangeStop, ChangeResign} }

// gracefulAim is the aim for a graceful leadership change: a new
// leader within 100 ms, whatever the timeouts.
const gracefulAim = 100 * time.Millisecond

// FailoverConfig is one failover measurement: Rounds leadership changes of
// one kind on a fresh 3-voter quorum running one timing profile.
type FailoverConfig struct {
	Profile  string
	Settings server.Settings
	Change   Change
	Rounds   int
	// Voters is the quorum's size; 0 means DefaultVoters.
	Voters int
	// Dir holds the voters' folders.
	Dir string
	// RoundTimeout bounds one round: the change, the new leader's first
	// commit, and the old leader's return; 0 picks a few times the bound.
	RoundTimeout time.Duration
}

// Failover is what a failover measurement found.
type Failover struct {
	Profile string `json:"profile"`
	Voters  int    `json:"voters"`
	Change  Change `json:"change"`
	Rounds  int    `json:"rounds"`
	// NewLeader runs from the change to the election of a new leader (a
	// voter's Leader transition in a later epoch).
	NewLeader Spread `json:"newLeader"`
	// HighWatermark runs from the change until the new leader commits the
	// first record of its epoch: its high watermark advances again and the
	// quorum accepts writes.
	HighWatermark Spread `json:"highWatermark"`
	// Bound is what the timeouts allow: for a kill, fetch timeout + 2 ×
	// election timeout; for a graceful change, the 100 ms aim.
	Bound     time.Duration `json:"boundNs"`
	BoundText string        `json:"bound"`
	// Samples are the rounds one by one.
	Samples []FailoverSample `json:"samples"`
	Error   string           `json:"error,omitempty"`
}

// FailoverSample is one leadership change.
type FailoverSample struct {
	OldLeader int32         `json:"oldLeader"`
	OldEpoch  int32         `json:"oldEpoch"`
	NewLeader int32         `json:"newLeader"`
	NewEpoch  int32         `json:"newEpoch"`
	ToLeader  time.Duration `json:"toLeaderNs"`
	ToCommit  time.Duration `json:"toHighWatermarkNs"`
}

// Spread summarises a few durations exactly, by the nearest-rank rule:
// with fewer than 100 samples p99 is the largest.
type Spread struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50Ns"`
	P99 time.Duration `json:"p99Ns"`
	Min time.Duration `json:"minNs"`
	Max time.Duration `json:"maxNs"`
}

// SpreadOf takes the nearest-rank percentiles of ds, which it leaves as
// they are.
func SpreadOf(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Spread{N: len(s), P50: rank(0.50), P99: rank(0.99), Min: s[0], Max: s[len(s)-1]}
}

// failoverBound is what the profile's timeouts allow the change to take.
func failoverBound(t server.Settings, c Change) (time.Duration, string) {
	if c == ChangeKill {
		return t.FetchTimeout + 2*t.ElectionTimeout, fmt.Sprintf("fetch timeout %v + 2 × election timeout %v", t.FetchTimeout, t.ElectionTimeout)
	}
	return gracefulAim, "aim for a graceful change"
}

// events collects the voters' events for a failover run. The nodes call
// add from their loops, so it never blocks.
type events struct {
	mu   sync.Mutex
	list []quorum.Event
	wake chan struct{}
}

func newEvents() *events { return &events{wake: make(chan struct{}, 1)} }

// add keeps the elections and the new leaders' first commits.
func (e *events) add(ev quorum.Event) {
	if ev.Kind != quorum.EventRaft {
		return
	}
	won := ev.Raft.Kind == raft.EventElectionWon
	committed := ev.Raft.Kind == raft.EventHighWatermarkKnown && ev.Status.Role == raft.Leader
	if !won && !committed {
		return
	}
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// first returns the first event of kind in an epoch above epoch.
func (e *events) first(kind raft.EventKind, epoch int32) (quorum.Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.list {
		if ev.Raft.Kind == kind && ev.Raft.Epoch > epoch {
			return ev, true
		}
	}
	return quorum.Event{}, false
}

func (e *events) reset() {
	e.mu.Lock()
	e.list = e.list[:0]
	e.mu.Unlock()
}

// RunFailover starts a quorum with cfg's timing and changes its leader
// cfg.Rounds times, each time waiting for a new leader and its first
// commit, then for the old leader (restarted after a kill or stop) to
// follow and catch up, so that every round starts from healthy
// voters. A round that fails ends the run; the result holds the rounds
// measured so far and the error.
func RunFailover(ctx context.Context, cfg FailoverConfig, progress io.Writer) (Failover, error) {
	if cfg.Voters == 0 {
		cfg.Voters = DefaultVoters
	}
	res := Failover{Profile: cfg.Profile, Voters: cfg.Voters, Change: cfg.Change}
	res.Bound, res.BoundText = failoverBound(cfg.Settings, cfg.Change)
	if cfg.Rounds < 1 {
		return res, errors.New("failover: rounds must be at least 1")
	}
	if !slices.Contains(Changes(), cfg.Change) {
		return res, fmt.Errorf("failover: unknown change %q (want kill, stop or resign)", cfg.Change)
	}
	roundTimeout := cfg.RoundTimeout
	if roundTimeout == 0 {
		roundTimeout = 4*(cfg.Settings.FetchTimeout+2*cfg.Settings.ElectionTimeout) + cfg.Settings.RequestTimeout + 10*time.Second
	}
	evs := newEvents()
	k := NewKraftlab("kraftlab", cfg.Settings)
	k.voters = cfg.Voters
	k.onEvent = evs.add
	durable := cfg.Settings.Flush == storage.FlushAlways
	if err := k.Start(cfg.Dir, durable); err != nil {
		return res, fmt.Errorf("failover: %w", err)
	}
	defer k.Close()

	var toLeader, toCommit []time.Duration
	finish := func(err error) (Failover, error) {
		res.Rounds = len(res.Samples)
		res.NewLeader, res.HighWatermark = SpreadOf(toLeader), SpreadOf(toCommit)
		if err != nil {
			res.Error = err.Error()
		}
		return res, err
	}
	for i := range cfg.Rounds {
		rctx, cancel := context.WithTimeout(ctx, roundTimeout)
		s, err := failoverRound(rctx, k, evs, cfg.Change)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("interrupted: %w", ctx.Err())
			}
			return finish(fmt.Errorf("failover %s/%s round %d: %w", cfg.Profile, cfg.Change, i+1, err))
		}
		res.Samples = append(res.Samples, s)
		toLeader, toCommit = append(toLeader, s.ToLeader), append(toCommit, s.ToCommit)
		fmt.Fprintf(progress, "failover %s %s %d/%d: node %d (epoch %d) -> node %d (epoch %d): leader after %v, high watermark after %v\n",
			cfg.Profile, cfg.Change, i+1, cfg.Rounds, s.OldLeader, s.OldEpoch, s.NewLeader, s.NewEpoch,
			s.ToLeader.Round(10*time.Microsecond), s.ToCommit.Round(10*time.Microsecond))
	}
	return finish(nil)
}

// failoverRound changes the leadership once and measures it.
func failoverRound(ctx context.Context, k *Kraftlab, evs *events, change Change) (FailoverSample, error) {
	if err := k.waitStable(ctx); err != nil {
		return FailoverSample{}, fmt.Errorf("quorum not stable before the change: %w", err)
	}
	old := k.leader.Load()
	st := old.Raft().Status()
	s := FailoverSample{OldLeader: old.ID(), OldEpoch: st.Epoch}
	evs.reset()
	t0 := time.Now()
	var err error
	switch change {
	case ChangeKill:
		err = old.Kill()
	case ChangeStop:
		err = old.Stop(ctx)
	case ChangeResign:
		err = old.Raft().Resign(ctx)
	}
	if err != nil {
		return s, fmt.Errorf("%s node %d: %w", change, old.ID(), err)
	}
	for {
		el, elected := evs.first(raft.EventElectionWon, s.OldEpoch)
		hw, committed := evs.first(raft.EventHighWatermarkKnown, s.OldEpoch)
		if elected && committed {
			s.NewLeader, s.NewEpoch = el.Node, el.Raft.Epoch
			s.ToLeader, s.ToCommit = el.Time.Sub(t0), hw.Time.Sub(t0)
			break
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("no new leader with a commit after %v: %w", time.Since(t0).Round(time.Millisecond), ctx.Err())
		case <-evs.wake:
		}
	}
	if change != ChangeResign {
		if err := k.group.Start(ctx, old); err != nil {
			return s, fmt.Errorf("restart node %d: %w", old.ID(), err)
		}
	}
	return s, nil
}

// FailoverPlan is one `bench failover` run: every profile with every change.
type FailoverPlan struct {
	Profiles []string
	Changes  []Change
	// Voters are the quorum sizes to measure; none means DefaultVoters.
	Voters []int
	// Rounds per profile and change; 0 uses DefaultRounds.
	Rounds int
	// Set overrides timing keys (key=value, as `kraftlab up --set`).
	Set []string
	Dir string
}

// DefaultRounds is the rounds a failover run does by default: 20, but 10
// for kills on the workshop profile, whose failovers take over 4 s each
// (its fetch timeout), so that the default run stays near 2 minutes.
func DefaultRounds(profile string, c Change) int {
	if profile == string(cluster.ProfileWorkshop) && c == ChangeKill {
		return 10
	}
	return 20
}

// RunFailovers runs every profile and change of plan in turn, in a fresh
// temporary folder unless plan.Dir names one. It stops at the first error
// and returns the results so far.
func RunFailovers(ctx context.Context, plan FailoverPlan, progress io.Writer) ([]Failover, error) {
	dir := plan.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "kraftlab-failover-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	var out []Failover
	for _, p := range plan.Profiles {
		t, err := cluster.ProfileSettings(cluster.ProfileName(p))
		if err != nil {
			return out, err
		}
		if err := t.Apply(plan.Set); err != nil {
			return out, err
		}
		if err := t.Validate(); err != nil {
			return out, err
		}
		sizes := plan.Voters
		if len(sizes) == 0 {
			sizes = []int{DefaultVoters}
		}
		for _, voters := range sizes {
			for _, c := range plan.Changes {
				rounds := plan.Rounds
				if rounds == 0 {
					rounds = DefaultRounds(p, c)
				}
				sub, err := os.MkdirTemp(dir, fmt.Sprintf("%s-%d-%s-", p, voters, c))
				if err != nil {
					return out, err
				}
				r, err := RunFailover(ctx, FailoverConfig{Profile: p, Settings: t, Change: c, Rounds: rounds, Voters: voters, Dir: sub}, progress)
				out = append(out, r)
				if err != nil {
					return out, err
				}
			}
		}
	}
	return out, nil
}

// WriteFailoverTable prints failover results for people.
func WriteFailoverTable(w io.Writer, rs []Failover) error {
	fmt.Fprintf(w, "kraftlab bench failover: the voters in one process over loopback TCP; each round changes the leader\n")
	fmt.Fprintf(w, "new leader = from the change to a voter's election; HWM = until that leader commits the first record of its epoch\n\n")
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "profile\tvoters\tchange\trounds\tleader p50\tp99\tmax\tHWM p50\tp99\tmax\tbound\tHWM p99 ÷ bound\t")
	for _, r := range rs {
		line := fmt.Sprintf("%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", r.Profile, r.Voters, r.Change, r.Rounds,
			fmtDur(r.NewLeader.P50), fmtDur(r.NewLeader.P99), fmtDur(r.NewLeader.Max),
			fmtDur(r.HighWatermark.P50), fmtDur(r.HighWatermark.P99), fmtDur(r.HighWatermark.Max),
			fmtDur(r.Bound), fmtRatio(div(float64(r.HighWatermark.P99), float64(r.Bound))))
		if r.Error != "" {
			line += "  " + r.Error
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Profile+string(r.Change)] && r.Change == ChangeKill {
			seen[r.Profile+string(r.Change)] = true
			fmt.Fprintf(w, "bound for %s kills: %s\n", r.Profile, r.BoundText)
		}
	}
	fmt.Fprintf(w, "bound for graceful changes (stop, resign): the %v aim; a preferred successor stands at once on EndQuorumEpoch\n", gracefulAim)
	fmt.Fprintf(w, "with n rounds p99 is the nearest-rank sample: the largest for n < 100\n")
	return nil
}
