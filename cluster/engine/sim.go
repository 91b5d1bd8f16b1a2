package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/metasim"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// simEngine is the playground under the seeded simulator (kraftlab up
// --sim): the whole cluster of cluster/sim in one goroutine's order, on a
// simulated network and clock. Time passes only in steps: an action that
// waits for the cluster (a controlled shutdown, a topic's creation), a
// wait, clock advance, or, while resumed, stretches of wall time. Every
// step goes into the history, so the run is a function of the seed and
// the steps, and can be replayed to any step and branched there.
type simEngine struct {
	cfg    cluster.Config
	events *cluster.Events
	dir    string
	// removeDir: the folder is a temporary one of ours.
	removeDir bool
	now       atomic.Int64

	mu     sync.Mutex
	w      *simWorld
	hist   *history
	worlds int
	closed bool
	// lastAct is the step the last action took, until the playground
	// names its scenario line (NameStep).
	lastAct *simStep

	// pace runs time at wall speed while resumed; paceStop ends it.
	// pacing mirrors whether it runs, for View, which holds mu: Pause
	// holds paceMu while the pacer it waits for may want mu.
	paceMu   sync.Mutex
	pacing   atomic.Bool
	paceStop chan struct{}
	paceDone chan struct{}
	slow     atomic.Int64
}

var (
	_ cluster.Engine    = (*simEngine)(nil)
	_ cluster.Simulator = (*simEngine)(nil)
)

// OpenSim starts a simulated playground (kraftlab up --sim --seed N).
func OpenSim(ctx context.Context, cfg cluster.Config) (*cluster.Playground, error) {
	return cluster.OpenWith(ctx, cfg, StartSim)
}

// StartSim implements cluster.StartFunc for a simulated playground.
func StartSim(_ context.Context, cfg cluster.Config, events *cluster.Events) (cluster.Engine, error) {
	if !cfg.Sim {
		return nil, errors.New("StartSim needs a configuration with Sim set")
	}
	e := &simEngine{cfg: cfg, events: events, dir: cfg.DataDir, hist: newHistory()}
	e.slow.Store(1)
	if e.dir == "" {
		dir, err := os.MkdirTemp("", "kraftlab-sim-")
		if err != nil {
			return nil, fmt.Errorf("data folder: %w", err)
		}
		e.dir, e.removeDir = dir, true
	}
	w, err := e.newWorld(e.publish)
	if err != nil {
		e.removeData()
		return nil, err
	}
	e.w = w
	return e, nil
}

// newWorld builds the run again from its seed; its events reach the
// stream through publish, if set.
func (e *simEngine) newWorld(publish func(cluster.Event)) (*simWorld, error) {
	e.worlds++
	return newSimWorld(e.cfg, filepath.Join(e.dir, fmt.Sprintf("run-%d", e.worlds)), &e.now, publish)
}

func (e *simEngine) removeData() {
	if e.removeDir {
		os.RemoveAll(e.dir)
	}
}

// Now implements cluster.Simulator. It reads no lock: the event stream
// stamps with it while the engine publishes.
func (e *simEngine) Now() time.Time {
	if n := e.now.Load(); n != 0 {
		return time.Unix(0, n).UTC()
	}
	return raftsim.Start
}

// act takes an action as a step of the run: line is how the history
// shows it and replay the scenario line that takes it again; check reads
// the world and refuses what makes no sense (nothing is recorded then);
// do changes it.
func (e *simEngine) act(line, replay string, check func(*simWorld) error, do func(*simWorld) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.usable(); err != nil {
		return err
	}
	if check != nil {
		if err := check(e.w); err != nil {
			return err
		}
	}
	st := &simStep{action: line, replay: replay, do: do, at: e.w.elapsed()}
	e.hist.add(st, e.w.steps)
	e.lastAct = st
	return e.w.apply(st)
}

// NameStep implements cluster.Simulator.
func (e *simEngine) NameStep(line string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lastAct != nil && line != "" {
		e.lastAct.replay = line
	}
	e.lastAct = nil
}

// usable says why the run takes no step, if it does not.
func (e *simEngine) usable() error {
	switch {
	case e.closed:
		return cluster.ErrClosed
	case e.w.failed != nil:
		return fmt.Errorf("%w; replay it with kraftlab rewind, or look at kraftlab history --log", e.w.failed)
	}
	return nil
}

// notSimulated refuses what the simulated cluster does not model.
func notSimulated(what string) error {
	return cluster.Errorf(cluster.ErrBadAction, "%s is not simulated: kraftlab up --sim runs the quorum, the controllers, the brokers' metadata and their replication of one topic; start a playground without --sim for it", what)
}

// knownNode refuses an id that names no node of the simulated cluster.
func knownNode(id int32) error {
	if id < 1 || (id > cluster.SimControllers && (id < cluster.FirstBrokerID || id >= cluster.FirstBrokerID+cluster.SimBrokers)) {
		return cluster.Errorf(cluster.ErrBadAction, "no node %d", id)
	}
	return nil
}

// runningNode refuses an id that names no running node.
func runningNode(w *simWorld, id int32) error {
	if err := knownNode(id); err != nil {
		return err
	}
	if !w.running(id) {
		return cluster.Errorf(cluster.ErrNodeState, "node %d is not running", id)
	}
	return nil
}

// Kill implements cluster.Engine.
func (e *simEngine) Kill(id int32) error {
	return e.act(fmt.Sprintf("kill %d", id), fmt.Sprintf("kill %d", id), func(w *simWorld) error { return runningNode(w, id) }, func(w *simWorld) error {
		w.meta().Kill(id)
		w.down[id] = view.StateKilled
		return nil
	})
}

// Start implements cluster.Engine: the node runs again at once, from
// what its log had flushed.
func (e *simEngine) Start(_ context.Context, id int32) error {
	return e.act(fmt.Sprintf("start %d", id), fmt.Sprintf("start %d", id), func(w *simWorld) error {
		if err := knownNode(id); err != nil {
			return err
		}
		if w.running(id) {
			return cluster.Errorf(cluster.ErrNodeState, "node %d is already running", id)
		}
		return nil
	}, func(w *simWorld) error {
		w.meta().Restart(id)
		delete(w.down, id)
		return nil
	})
}

// simStopLimit bounds how long a graceful stop may take before the
// engine gives up waiting for it (a broker whose controller never
// answers its controlled shutdown).
const simStopLimit = time.Minute

// Stop implements cluster.Engine: a controller shuts down (a leader
// resigns first); a broker asks the active controller for a controlled
// shutdown first, as Kafka's BrokerLifecycleManager does.
func (e *simEngine) Stop(_ context.Context, id int32) error {
	return e.act(fmt.Sprintf("stop %d", id), fmt.Sprintf("stop %d", id), func(w *simWorld) error { return runningNode(w, id) }, func(w *simWorld) error {
		if id >= cluster.FirstBrokerID {
			w.meta().ControlledShutdown(id)
		} else {
			w.meta().Shutdown(id)
		}
		if err := w.runUntil(func() bool { return !w.running(id) }, simStopLimit); err != nil {
			return err
		}
		if w.running(id) {
			return fmt.Errorf("node %d did not stop within %v of simulated time", id, simStopLimit)
		}
		w.down[id] = view.StateStopped
		return nil
	})
}

// Resign implements cluster.Engine.
func (e *simEngine) Resign(_ context.Context, id int32) error {
	return e.act(fmt.Sprintf("resign (node %d)", id), "resign", func(w *simWorld) error { return runningNode(w, id) }, func(w *simWorld) error {
		w.meta().Resign(id)
		return nil
	})
}

// SetLinks implements cluster.Engine. A delay's jitter may reorder the
// link's messages, which a TCP connection would not.
func (e *simEngine) SetLinks(changes []cluster.LinkChange) error {
	line := "link"
	for _, c := range changes {
		line += fmt.Sprintf(" %d>%d%s", c.From, c.To, linkWords(c.Fault))
	}
	// The playground names the line that made these changes (partition,
	// link, heal, isolate), its nodes resolved.
	return e.act(line, line, func(w *simWorld) error {
		for _, c := range changes {
			if err := knownNode(c.From); err != nil {
				return err
			}
			if err := knownNode(c.To); err != nil {
				return err
			}
		}
		return nil
	}, func(w *simWorld) error {
		for _, c := range changes {
			w.meta().SetLink(c.From, c.To, raftsim.LinkFault{Down: c.Fault.Down, Loss: c.Fault.Loss, Delay: c.Fault.Delay, Jitter: c.Fault.Jitter})
		}
		return nil
	})
}

// linkWords spells a link's fault in a step's line.
func linkWords(f view.LinkFault) string {
	switch {
	case f.Down:
		return ":down"
	case f == view.LinkFault{}:
		return ":ok"
	}
	return fmt.Sprintf(":delay=%v,jitter=%v,loss=%g", f.Delay, f.Jitter, f.Loss)
}

// Snapshot implements cluster.Engine.
func (e *simEngine) Snapshot(_ context.Context, id int32) (view.SnapshotID, error) {
	var sid view.SnapshotID
	err := e.act(fmt.Sprintf("snapshot %d", id), fmt.Sprintf("snapshot %d", id), func(w *simWorld) error { return runningNode(w, id) }, func(w *simWorld) error {
		if !w.meta().Snapshot(id) {
			st := w.status(id)
			return cluster.Errorf(cluster.ErrNodeState, "node %d cannot snapshot now: a snapshot is of its metadata image, which must end where it applied the log (%d), past its log start (%d) and within the high watermark (%d); a control batch (a new leader's LeaderChange) at the end holds it back until the next record commits", id, st.AppliedOffset, st.LogStartOffset, st.HighWatermark)
		}
		st := w.status(id)
		sid = st.LatestSnapshot
		return nil
	})
	return sid, err
}

// simTopicLimit bounds how long a topic's creation may take.
const simTopicLimit = 30 * time.Second

// CreateTopic implements cluster.Engine: a client asks the active
// controller over the simulated network and waits for its answer. The
// topic lives in the metadata only: the data plane carries the
// producer's topic.
func (e *simEngine) CreateTopic(_ context.Context, spec cluster.TopicSpec) error {
	line := fmt.Sprintf("topics create %s --partitions %d --replication-factor %d", spec.Name, spec.Partitions, spec.ReplicationFactor)
	for _, k := range slices.Sorted(maps.Keys(spec.Configs)) {
		line += fmt.Sprintf(" --config %s=%s", k, spec.Configs[k])
	}
	var refused error
	err := e.act(line, line, nil, func(w *simWorld) error {
		var configs []metasim.TopicConfig
		for k, v := range spec.Configs {
			configs = append(configs, metasim.TopicConfig{Name: k, Value: v})
		}
		slices.SortFunc(configs, func(a, b metasim.TopicConfig) int { return strings.Compare(a.Name, b.Name) })
		code := int16(-2)
		w.meta().CreateTopic(spec.Name, spec.Partitions, spec.ReplicationFactor, func(c int16) { code = c }, configs...)
		if err := w.runUntil(func() bool { return code != -2 }, simTopicLimit); err != nil {
			return err
		}
		switch {
		case code == -2:
			return fmt.Errorf("create topic %s: no answer within %v of simulated time", spec.Name, simTopicLimit)
		case code < 0:
			refused = cluster.Errorf(cluster.ErrRefused, "create topic %s: no controller answered in time", spec.Name)
		case code > 0:
			refused = cluster.Errorf(cluster.ErrRefused, "create topic %s: %v", spec.Name, kerr.ErrorForCode(code))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return refused
}

// MetadataImage implements cluster.Engine.
func (e *simEngine) MetadataImage(id int32) (*image.MetadataImage, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := runningNode(e.w, id); err != nil {
		return nil, err
	}
	return e.w.meta().Image(id), nil
}

// Clock implements cluster.Engine: simulated time is no cluster clock
// (cluster.Simulator has its own actions).
func (e *simEngine) Clock() *clock.Clock { return nil }

// HeldMessages implements cluster.Engine: the simulated network holds
// none; paused simulated time delivers nothing at all.
func (e *simEngine) HeldMessages() []view.Message { return nil }

// Trace implements cluster.Engine: the simulated network keeps no trace
// of the messages' fields.
func (e *simEngine) Trace(int) view.Trace { return view.Trace{} }

// Close implements cluster.Engine.
func (e *simEngine) Close() error {
	e.Pause()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.w.close()
	e.removeData()
	return nil
}
