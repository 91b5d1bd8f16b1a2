package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
)

// propagationAim is the aim: a committed change on every broker
// within 50 ms at p99.
const propagationAim = 50 * time.Millisecond

// Propagation is what the propagation measurement found: how long a
// committed metadata change takes to reach every broker's image.
type Propagation struct {
	Profile string `json:"profile"`
	Brokers int    `json:"brokers"`
	// Partitions is how many partitions the metadata held besides the
	// changes' own topics (created through the controller beforehand).
	Partitions int `json:"partitions"`
	// Fill is how long creating those partitions took.
	Fill    time.Duration `json:"fillNs"`
	Changes int           `json:"changes"`
	// AllBrokers runs from the commit (the active controller's own loader
	// publishing the change, which it is handed once the leader's high
	// watermark passes the record) to the last broker's loader publishing
	// it; one sample per change.
	AllBrokers Spread `json:"allBrokers"`
	// EachBroker is the same for every broker of every change.
	EachBroker Spread `json:"eachBroker"`
	// BrokerSpread is, per change, the last broker's time less the first's.
	BrokerSpread Spread `json:"brokerSpread"`
	// Answer runs from sending CreateTopics to the controller's answer,
	// which it sends once the records commit.
	Answer Spread `json:"createTopicsAnswer"`
	// FastestBroker and SlowestBroker are the brokers with the lowest and
	// highest median commit-to-applied time, and those medians.
	FastestBroker    int32         `json:"fastestBroker"`
	FastestBrokerP50 time.Duration `json:"fastestBrokerP50Ns"`
	SlowestBroker    int32         `json:"slowestBroker"`
	SlowestBrokerP50 time.Duration `json:"slowestBrokerP50Ns"`
	Aim              time.Duration `json:"aimNs"`
	// ControllerChanges are the quorum controllers' deactivations (epoch
	// and reason) seen so far on this cluster: none is the benchmark's
	// doing, and the fill and the changes retried through them.
	ControllerChanges []string `json:"controllerChanges,omitempty"`
	Error             string   `json:"error,omitempty"`
}

// propagationSample is one change: each broker's time from the commit.
type propagationSample struct {
	answer  time.Duration
	brokers map[int32]time.Duration
}

// runPropagation starts 3 controllers and cfg.Brokers brokers and, at
// each of cfg.PropagationPartitions in ascending order (the metadata
// filled up to that many partitions first), creates cfg.Changes
// one-partition topics through the active controller, one at a time,
// timing each from its commit to every broker's loader.
func runPropagation(ctx context.Context, cfg MetadataConfig, progress io.Writer) ([]Propagation, error) {
	sizes := slices.Clone(cfg.PropagationPartitions)
	if len(sizes) == 0 {
		sizes = []int{0}
	}
	slices.Sort(sizes)
	var out []Propagation
	fail := func(res Propagation, err error) ([]Propagation, error) {
		res.Error = err.Error()
		return append(out, res), err
	}
	first := Propagation{Profile: cfg.Profile, Brokers: cfg.Brokers, Partitions: sizes[0], Aim: propagationAim}
	dir, err := subDir(cfg.Dir, "propagation")
	if err != nil {
		return fail(first, err)
	}
	mc, err := newMetaCluster(cfg.Settings, dir, cfg.Brokers)
	if err != nil {
		return fail(first, fmt.Errorf("propagation: %w", err))
	}
	defer mc.close()
	sctx, cancel := context.WithTimeout(ctx, clusterStartTimeout(cfg))
	err = mc.start(sctx)
	cancel()
	if err != nil {
		return fail(first, fmt.Errorf("propagation: %w", err))
	}
	fmt.Fprintf(progress, "propagation %s: 3 controllers and %d brokers running\n", cfg.Profile, cfg.Brokers)
	have := 0
	for _, n := range sizes {
		res := Propagation{Profile: cfg.Profile, Brokers: cfg.Brokers, Partitions: n, Aim: propagationAim}
		t0 := time.Now()
		if err := fillPartitions(ctx, mc, fmt.Sprintf("fill-%d", n), n-have, roundTimeout(cfg)+time.Duration(n/1000)*time.Second); err != nil {
			return fail(res, fmt.Errorf("propagation: creating %d partitions: %w", n, err))
		}
		if n > have {
			res.Fill = time.Since(t0)
			fmt.Fprintf(progress, "propagation %s: %d partitions created in %v\n", cfg.Profile, n, fmtDur(res.Fill))
		}
		have = n
		err := propagateChanges(ctx, cfg, mc, &res)
		res.ControllerChanges = mc.controllerChanges()
		out = append(out, res)
		if err != nil {
			return out, err
		}
		fmt.Fprintf(progress, "propagation %s at %d partitions: %d changes, commit to all %d brokers p50 %v p99 %v\n",
			cfg.Profile, n, res.Changes, cfg.Brokers, fmtDur(res.AllBrokers.P50), fmtDur(res.AllBrokers.P99))
	}
	return out, nil
}

// propagateChanges makes cfg.Changes changes and summarises them in res.
func propagateChanges(ctx context.Context, cfg MetadataConfig, mc *metaCluster, res *Propagation) error {
	var samples []propagationSample
	var cl *wire.Client
	var clNode *server.Server
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	finish := func(err error) error {
		res.Changes = len(samples)
		summarisePropagation(res, samples)
		if err != nil {
			res.Error = err.Error()
		}
		return err
	}
	// A change answered NOT_CONTROLLER (the active controller moved, which
	// the benchmark never causes) is made again, under a new name,
	// through the next one; a few of them in a row end the run.
	for i, retries := 0, 0; i < cfg.Changes; {
		var active *server.Server
		if err := waitUntil(ctx, "an active controller", func() bool { active = mc.active(); return active != nil }); err != nil {
			return finish(fmt.Errorf("propagation change %d: %w", i+1, err))
		}
		if active != clNode {
			if cl != nil {
				cl.Close()
			}
			var err error
			if cl, err = mc.client(active); err != nil {
				cl = nil
				return finish(err)
			}
			clNode = active
		}
		rctx, cancel := context.WithTimeout(ctx, roundTimeout(cfg))
		s, err := propagateOnce(rctx, mc, cl, active.ID(), fmt.Sprintf("bench-propagation-%d-%05d-%d", res.Partitions, i, retries))
		cancel()
		if errors.Is(err, errNotController) && retries < 5 && ctx.Err() == nil {
			retries++
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("interrupted: %w", ctx.Err())
			}
			return finish(fmt.Errorf("propagation at %d partitions, change %d: %w", res.Partitions, i+1, err))
		}
		samples = append(samples, s)
		i, retries = i+1, 0
	}
	return finish(nil)
}

// propagateOnce creates topic and waits until every broker applied it.
func propagateOnce(ctx context.Context, mc *metaCluster, cl *wire.Client, activeID int32, topic string) (propagationSample, error) {
	done := mc.arrivals.expect(topic, mc.brokers)
	t0 := time.Now()
	if err := mc.createTopics(ctx, cl, []string{topic}, 1, int16(min(3, len(mc.brokers)))); err != nil {
		return propagationSample{}, err
	}
	answer := time.Since(t0)
	select {
	case <-done:
	case <-ctx.Done():
		return propagationSample{}, fmt.Errorf("topic %s not on every broker after %v: %w", topic, time.Since(t0).Round(time.Millisecond), ctx.Err())
	}
	at := mc.arrivals.times()
	commit, ok := at[activeID]
	if !ok {
		return propagationSample{}, errors.New("the active controller's loader never published the change it answered for")
	}
	s := propagationSample{answer: answer, brokers: map[int32]time.Duration{}}
	for _, id := range mc.brokers {
		s.brokers[id] = at[id].Sub(commit)
	}
	return s, nil
}

func summarisePropagation(res *Propagation, samples []propagationSample) {
	if len(samples) == 0 {
		return
	}
	var all, each, gap, answers []time.Duration
	perBroker := map[int32][]time.Duration{}
	for _, s := range samples {
		answers = append(answers, s.answer)
		first, last := time.Duration(1<<62), time.Duration(-1<<62)
		for id, d := range s.brokers {
			each = append(each, d)
			perBroker[id] = append(perBroker[id], d)
			first, last = min(first, d), max(last, d)
		}
		all, gap = append(all, last), append(gap, last-first)
	}
	res.AllBrokers, res.EachBroker, res.BrokerSpread, res.Answer = SpreadOf(all), SpreadOf(each), SpreadOf(gap), SpreadOf(answers)
	ids := make([]int32, 0, len(perBroker))
	for id := range perBroker {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids {
		p := SpreadOf(perBroker[id]).P50
		if i == 0 || p < res.FastestBrokerP50 {
			res.FastestBroker, res.FastestBrokerP50 = id, p
		}
		if i == 0 || p > res.SlowestBrokerP50 {
			res.SlowestBroker, res.SlowestBrokerP50 = id, p
		}
	}
}
