package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/replication/raft"
)

// MetaFailover is what the controller failover measurement found at one
// metadata size: the active controller killed again and again.
type MetaFailover struct {
	Profile    string `json:"profile"`
	Partitions int    `json:"partitions"`
	Brokers    int    `json:"brokers"`
	Rounds     int    `json:"rounds"`
	// Fill is how long creating the partitions took.
	Fill time.Duration `json:"fillNs"`
	// ElectionToCreate runs from the new leader's election (its raft
	// EventElectionWon) to its quorum controller's first successful
	// CreateTopics answer.
	ElectionToCreate Spread `json:"electionToCreateTopics"`
	// ElectionToActive runs from that election to the new quorum
	// controller's EventActivated: the loader has applied the log before
	// the epoch, the controller heard it leads and took over.
	ElectionToActive Spread `json:"electionToActive"`
	// Activation is the new quorum controller's own EventActivated Took:
	// from learning it leads to its activation being committed.
	Activation Spread `json:"activation"`
	// KillToCreate runs from the kill to that answer.
	KillToCreate Spread               `json:"killToCreateTopics"`
	Samples      []MetaFailoverSample `json:"samples"`
	// Shutdown is the controlled shutdown after the kills, if asked for.
	Shutdown ControlledShutdownSample `json:"controlledShutdown,omitzero"`
	Error    string                   `json:"error,omitempty"`
}

// MetaFailoverSample is one kill of the active controller.
type MetaFailoverSample struct {
	OldController    int32         `json:"oldController"`
	NewController    int32         `json:"newController"`
	NewEpoch         int32         `json:"newEpoch"`
	KillToElection   time.Duration `json:"killToElectionNs"`
	ElectionToCreate time.Duration `json:"electionToCreateTopicsNs"`
	ElectionToActive time.Duration `json:"electionToActiveNs"`
	Activation       time.Duration `json:"activationNs"`
}

// runMetaFailover fills a fresh cluster's metadata with partitions
// partitions, then kills its active controller cfg.FailoverRounds times.
func runMetaFailover(ctx context.Context, cfg MetadataConfig, partitions int, progress io.Writer) (MetaFailover, error) {
	res := MetaFailover{Profile: cfg.Profile, Partitions: partitions, Brokers: cfg.FailoverBrokers}
	var toCreate, toActive, activation, killTo []time.Duration
	finish := func(err error) (MetaFailover, error) {
		res.Rounds = len(res.Samples)
		res.ElectionToCreate, res.ElectionToActive = SpreadOf(toCreate), SpreadOf(toActive)
		res.Activation, res.KillToCreate = SpreadOf(activation), SpreadOf(killTo)
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("interrupted: %w", ctx.Err())
			}
			err = fmt.Errorf("failover at %d partitions: %w", partitions, err)
			res.Error = err.Error()
		}
		return res, err
	}
	dir, err := subDir(cfg.Dir, fmt.Sprintf("failover-%d", partitions))
	if err != nil {
		return finish(err)
	}
	mc, err := newMetaCluster(cfg.Settings, dir, cfg.FailoverBrokers)
	if err != nil {
		return finish(err)
	}
	defer mc.close()
	sctx, cancel := context.WithTimeout(ctx, clusterStartTimeout(cfg))
	err = mc.start(sctx)
	cancel()
	if err != nil {
		return finish(err)
	}
	t0 := time.Now()
	if err := fillPartitions(ctx, mc, "fill", partitions, roundTimeout(cfg)); err != nil {
		return finish(fmt.Errorf("creating the partitions: %w", err))
	}
	res.Fill = time.Since(t0)
	fmt.Fprintf(progress, "failover %s: %d partitions created in %v\n", cfg.Profile, partitions, fmtDur(res.Fill))
	for i := range cfg.FailoverRounds {
		rctx, cancel := context.WithTimeout(ctx, roundTimeout(cfg))
		s, err := killActiveController(rctx, mc, partitions, fmt.Sprintf("bench-failover-%d", i))
		cancel()
		if err != nil {
			return finish(fmt.Errorf("round %d: %w", i+1, err))
		}
		res.Samples = append(res.Samples, s)
		toCreate, activation = append(toCreate, s.ElectionToCreate), append(activation, s.Activation)
		toActive = append(toActive, s.ElectionToActive)
		killTo = append(killTo, s.KillToElection+s.ElectionToCreate)
		fmt.Fprintf(progress, "failover %s %d partitions %d/%d: controller %d -> %d (epoch %d): elected after %v, active %v and CreateTopics answered %v later, activation took %v\n",
			cfg.Profile, partitions, i+1, cfg.FailoverRounds, s.OldController, s.NewController, s.NewEpoch,
			fmtDur(s.KillToElection), fmtDur(s.ElectionToActive), fmtDur(s.ElectionToCreate), fmtDur(s.Activation))
	}
	if cfg.FailoverShutdown {
		rctx, cancel := context.WithTimeout(ctx, roundTimeout(cfg))
		defer cancel()
		if res.Shutdown, err = mc.controlledShutdown(rctx); err != nil {
			return finish(fmt.Errorf("controlled shutdown: %w", err))
		}
		sh := res.Shutdown
		fmt.Fprintf(progress, "controlled shutdown kraft %d partitions: broker %d, leading %d and in %d ISRs, let go after %v\n",
			partitions, sh.Broker, sh.Led, sh.InISR, fmtDur(sh.Took))
	}
	return finish(nil)
}

// controlledShutdown stops the broker that leads the most partitions
// once the cluster is healthy.
func (c *metaCluster) controlledShutdown(ctx context.Context) (ControlledShutdownSample, error) {
	if err := c.waitHealthy(ctx); err != nil {
		return ControlledShutdownSample{}, err
	}
	s := busiestLeader(c.active().Loader().Image(), c.brokers, -1)
	return s, stopTimed(ctx, c.group.Server(s.Broker), c.states, &s)
}

// killActiveController kills the active controller once the cluster is
// healthy and every controller holds the metadata, waits for the new
// leader's election, then sends CreateTopics to it until it succeeds; it
// restarts the killed controller before returning.
func killActiveController(ctx context.Context, mc *metaCluster, partitions int, topic string) (MetaFailoverSample, error) {
	var s MetaFailoverSample
	if err := mc.waitHealthy(ctx); err != nil {
		return s, err
	}
	old := mc.active()
	if old == nil {
		return s, errors.New("no active controller")
	}
	if err := waitUntil(ctx, "every controller to hold the partitions", func() bool {
		for _, id := range mc.voters {
			if mc.group.Server(id).Loader().Image().Topics().NumPartitions() < partitions {
				return false
			}
		}
		return true
	}); err != nil {
		return s, err
	}
	oldEpoch := old.Raft().Status().Epoch
	s.OldController = old.ID()
	mc.elections.reset()
	drainActivations(mc.activations)
	tKill := time.Now()
	if err := old.Kill(); err != nil {
		return s, fmt.Errorf("kill controller %d: %w", old.ID(), err)
	}
	var won quorumEventTime
	for {
		if ev, ok := mc.elections.first(raft.EventElectionWon, oldEpoch); ok {
			won = quorumEventTime{node: ev.Node, epoch: ev.Raft.Epoch, at: ev.Time}
			break
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("no new leader after %v: %w", time.Since(tKill).Round(time.Millisecond), ctx.Err())
		case <-mc.elections.wake:
		}
	}
	s.NewController, s.NewEpoch, s.KillToElection = won.node, won.epoch, won.at.Sub(tKill)
	cl, err := mc.client(mc.group.Server(won.node))
	if err != nil {
		return s, err
	}
	defer cl.Close()
	for {
		err := mc.createTopics(ctx, cl, []string{topic}, 1, 1)
		if err == nil {
			s.ElectionToCreate = time.Since(won.at)
			break
		}
		if !errors.Is(err, errNotController) {
			return s, fmt.Errorf("CreateTopics on controller %d: %w", won.node, err)
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("controller %d never answered CreateTopics: %w", won.node, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	act, err := activationOf(ctx, mc.activations, won.epoch)
	if err != nil {
		return s, err
	}
	s.Activation, s.ElectionToActive = act.Took, act.Time.Sub(won.at)
	if err := mc.group.Start(ctx, old); err != nil {
		return s, err
	}
	return s, nil
}

// quorumEventTime is an election: who won, which epoch, when.
type quorumEventTime struct {
	node  int32
	epoch int32
	at    time.Time
}

func drainActivations(ch chan controller.Event) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// activationOf waits for the quorum controller's activation in epoch.
func activationOf(ctx context.Context, ch chan controller.Event, epoch int32) (controller.Event, error) {
	for {
		select {
		case ev := <-ch:
			if ev.Epoch == epoch {
				return ev, nil
			}
		case <-ctx.Done():
			return controller.Event{}, fmt.Errorf("no activation in epoch %d: %w", epoch, ctx.Err())
		}
	}
}
