package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// failoverRetryGap is the pause between CreateTopics attempts after a
// kill: the measurement's resolution, with one attempt's round trip.
const failoverRetryGap = time.Millisecond

// PeerFailover is the active controller killed again and again.
type PeerFailover struct {
	Rounds int `json:"rounds"`
	// KillToCreate is from just before the kill (a SIGKILL for Kafka,
	// the control API's kill for kraftlab, whose round trip it includes)
	// to the first CreateTopics a surviving controller answers without
	// error.
	KillToCreate benchkit.Spread     `json:"killToCreateTopics"`
	Samples      []PeerFailoverRound `json:"samples"`
}

// PeerFailoverRound is one kill.
type PeerFailoverRound struct {
	Old          int32         `json:"oldController"`
	New          int32         `json:"newController"`
	KillToCreate time.Duration `json:"killToCreateTopicsNs"`
}

// runPeerFailover kills the active controller cfg.FailoverRounds times;
// between kills the killed one starts again and the quorum catches up.
func runPeerFailover(ctx context.Context, pc peerCluster, cfg PeerConfig, name string, progress io.Writer) (PeerFailover, error) {
	var res PeerFailover
	var kills []time.Duration
	finish := func(err error) (PeerFailover, error) {
		res.Rounds = len(res.Samples)
		res.KillToCreate = benchkit.SpreadOf(kills)
		return res, err
	}
	for i := range cfg.FailoverRounds {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		s, err := killActiveOnce(rctx, pc, cfg.Controllers, fmt.Sprintf("peer-failover-%02d", i))
		cancel()
		if err != nil {
			return finish(fmt.Errorf("round %d: %w", i+1, err))
		}
		res.Samples = append(res.Samples, s)
		kills = append(kills, s.KillToCreate)
		fmt.Fprintf(progress, "%s: failover %d/%d: controller %d killed, CreateTopics answered by %d after %v\n",
			name, i+1, cfg.FailoverRounds, s.Old, s.New, s.KillToCreate.Round(time.Millisecond))
	}
	return finish(nil)
}

// killActiveOnce waits for a caught-up quorum, kills its leader, then
// sends CreateTopics to each surviving controller in turn until one
// succeeds, and starts the killed controller again.
func killActiveOnce(ctx context.Context, pc peerCluster, controllers int, topic string) (PeerFailoverRound, error) {
	var s PeerFailoverRound
	var old int32 = -1
	if err := pollUntil(ctx, "a caught-up metadata quorum", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		l, err := activeController(ctx, pc)
		if err != nil {
			return false, err
		}
		defer l.close()
		ok, err := quorumCaughtUp(ctx, l, controllers)
		if ok {
			old, err = quorumLeader(ctx, l)
		}
		return ok && err == nil, err
	}); err != nil {
		return s, err
	}
	s.Old = old
	var rest []*pinned
	ids := map[*pinned]int32{}
	for id, addr := range pc.controllers() {
		if id == old {
			continue
		}
		p, err := newPinned(addr)
		if err != nil {
			closeAll(rest)
			return s, err
		}
		rest, ids[p] = append(rest, p), id
	}
	defer closeAll(rest)
	// Connect first, so that neither system pays for a dial in the
	// measurement. A controller started again in the last round may
	// have caught up through its raft client before its listener takes
	// clients, as Kafka's does.
	for _, p := range rest {
		if err := pollUntil(ctx, fmt.Sprintf("controller %d to take clients", ids[p]), 20*time.Millisecond, func(ctx context.Context) (bool, error) {
			_, err := p.request(ctx, kmsg.NewPtrApiVersionsRequest())
			return err == nil, err
		}); err != nil {
			return s, err
		}
	}
	t0 := time.Now()
	if err := pc.kill(ctx, old); err != nil {
		return s, fmt.Errorf("kill controller %d: %w", old, err)
	}
	var last error
	for i := 0; ; i++ {
		p := rest[i%len(rest)]
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := createTopic(actx, p, topic, 1, 1)
		cancel()
		if err == nil {
			s.KillToCreate, s.New = time.Since(t0), ids[p]
			break
		}
		last = err
		if ctx.Err() != nil {
			return s, fmt.Errorf("no controller answered CreateTopics after killing %d: %w", old, errors.Join(ctx.Err(), last))
		}
		time.Sleep(failoverRetryGap)
	}
	if err := pc.start(ctx, old); err != nil {
		return s, fmt.Errorf("start controller %d again: %w", old, err)
	}
	return s, nil
}
