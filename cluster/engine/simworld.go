package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	csim "github.com/kraftlab/kraftlab/cluster/sim"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/metadata/metasim"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
)

// simWorld is one replay of a simulated run: the whole cluster built
// from the seed (cluster/sim: the real raft nodes, QuorumControllers,
// loaders and brokers' lifecycles, with the data plane's replicas and
// fetchers on the brokers), and the steps applied to it so far. Its
// methods run on the engine's lock.
type simWorld struct {
	s   *csim.Sim
	dir string
	// down holds the nodes an action stopped, killed or stopped.
	down map[int32]view.State
	// truncations and snapshotsLoaded count the raft events the view
	// shows, by node.
	truncations, snapshotsLoaded map[int32]int64
	// log is the branch's event log so far, steps included.
	log []cluster.Event
	// steps is how many steps of the branch it applied; stepEntry is the
	// log's line for the last.
	steps, stepEntry int
	// publish, if set, also tells the playground's event stream what
	// happens; a replay leaves it nil until it is done.
	publish func(cluster.Event)
	// now mirrors the simulated time for readers without the lock.
	now *atomic.Int64
	// failed is the first invariant the run broke; the world then takes
	// no more steps.
	failed error
}

// errRunBroken marks a world whose simulation broke an invariant.
var errRunBroken = errors.New("the simulation broke an invariant")

// newSimWorld builds the cluster of cfg from seed in a folder of its own
// under dir and runs it until the brokers are registered and the
// producer's topic is led.
func newSimWorld(cfg cluster.Config, dir string, now *atomic.Int64, publish func(cluster.Event)) (*simWorld, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("simulation folder: %w", err)
	}
	w := &simWorld{dir: dir, down: map[int32]view.State{}, truncations: map[int32]int64{}, snapshotsLoaded: map[int32]int64{}, now: now, publish: publish}
	set := cfg.Settings
	sh := csim.Shape{
		Replication:            set.Replication,
		EligibleLeaderReplicas: set.EligibleLeaderReplicasVersion > 0,
		AutoLeaderRebalance:    set.AutoLeaderRebalanceEnable,
		SessionTimeout:         set.BrokerSessionTimeout,
		HeartbeatInterval:      set.BrokerHeartbeatInterval,
		Partitions:             simTopicPartitions,
		FlushPolicy:            set.Flush,
		MinInsyncReplicas:      int(set.MinInsyncReplicas),
	}
	s, err := csim.Start(csim.Options{Seed: cfg.Seed, Dir: filepath.Join(dir, "brokers"), TraceLines: 20}, sh, func(o *metasim.Options) {
		o.Raft = set.RaftConfig(0, nil, "")
		o.OnRaftEvent = w.raftEvent
	})
	if s != nil {
		w.s = s
	}
	w.tick()
	if err != nil {
		w.close()
		return nil, fmt.Errorf("start the simulated cluster (seed %d): %w", cfg.Seed, err)
	}
	return w, nil
}

// simTopicPartitions is how many partitions the producer's topic has.
const simTopicPartitions = 2

func (w *simWorld) meta() *metasim.Sim       { return w.s.Meta() }
func (w *simWorld) quorum() *raftsim.Cluster { return w.s.Meta().Cluster() }
func (w *simWorld) clock() time.Time         { return w.quorum().Now() }
func (w *simWorld) elapsed() time.Duration   { return w.clock().Sub(raftsim.Start) }
func (w *simWorld) running(id int32) bool    { return w.quorum().Running(id) }
func (w *simWorld) tick()                    { w.now.Store(w.clock().UnixNano()) }
func (w *simWorld) status(id int32) raft.Status {
	st, _ := w.quorum().Status(id)
	return st
}

// raftEvent narrates a node's raft event as the real engine does.
func (w *simWorld) raftEvent(id int32, ev raft.Event, st raft.Status) {
	switch ev.Kind {
	case raft.EventTruncated:
		w.truncations[id]++
	case raft.EventSnapshotFetched:
		w.snapshotsLoaded[id]++
	}
	kind, msg, ok := narrate(quorum.Event{Kind: quorum.EventRaft, Node: id, Raft: ev, Status: st})
	if !ok {
		return
	}
	w.emit(cluster.Event{Time: ev.Time, Kind: kind, Node: id, Epoch: ev.Epoch, Message: msg})
}

// emit adds an event to the log, and to the stream unless replaying.
func (w *simWorld) emit(ev cluster.Event) {
	if ev.Time.IsZero() {
		ev.Time = w.clock()
	}
	w.record(ev)
	if w.publish != nil {
		w.publish(ev)
	}
}

// record adds an event to the log, numbered by its place in it.
func (w *simWorld) record(ev cluster.Event) {
	ev.Seq = uint64(len(w.log) + 1)
	w.log = append(w.log, ev)
}

// apply takes one step: it logs it, runs it and checks what the
// simulation found.
func (w *simWorld) apply(st *simStep) error {
	if w.failed != nil {
		return w.failed
	}
	w.steps++
	w.stepEntry = len(w.log)
	w.record(cluster.Event{Time: w.clock(), Kind: cluster.EventSimStep, Message: stepLine(w.steps, st)})
	err := st.run(w)
	w.tick()
	if qerr := w.quorum().Err(); qerr != nil {
		w.fail(qerr)
		return w.failed
	}
	return err
}

// stepLine is a step's line in the log.
func stepLine(n int, st *simStep) string { return fmt.Sprintf("step %d: %s", n, st.text()) }

// fail records the first invariant the run broke.
func (w *simWorld) fail(err error) {
	if w.failed != nil {
		return
	}
	w.failed = fmt.Errorf("%w at step %d: %w", errRunBroken, w.steps, err)
	w.emit(cluster.Event{Kind: cluster.EventUnsafe, Message: w.failed.Error()})
}

// runFor runs d of simulated time.
func (w *simWorld) runFor(d time.Duration) error {
	err := w.meta().RunFor(d)
	w.tick()
	return err
}

// runUntil runs until cond holds, at most limit; it is no error if
// cond never does.
func (w *simWorld) runUntil(cond func() bool, limit time.Duration) error {
	end := w.clock().Add(limit)
	for !cond() && w.clock().Before(end) {
		if err := w.runFor(min(cluster.SimCheckInterval, end.Sub(w.clock()))); err != nil {
			return err
		}
	}
	return nil
}

func (w *simWorld) close() {
	if w.s != nil && w.s.Data() != nil {
		w.s.Data().Close()
	}
	os.RemoveAll(w.dir)
}
