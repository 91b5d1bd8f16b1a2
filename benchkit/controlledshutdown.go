package benchkit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/server"
)

// ControlledShutdownSample is one broker's controlled shutdown: from
// PENDING_CONTROLLED_SHUTDOWN, when it asks the controller to move its
// leaderships away, to SHUTTING_DOWN, when the controller let it go. A
// ZooKeeper-era broker asks with ControlledShutdown and the controller
// writes every changed partition to ZooKeeper and pushes LeaderAndIsr; a
// KRaft broker asks in its heartbeats and the controller commits the
// changes as records that the brokers fetch.
type ControlledShutdownSample struct {
	Broker int32 `json:"broker"`
	// Led and InISR are the partitions the broker led and those whose
	// ISR held it as it began: each of the latter changes once.
	Led   int           `json:"led"`
	InISR int           `json:"inIsr"`
	Took  time.Duration `json:"tookNs"`
}

// brokerStates keeps when each broker last entered each lifecycle state.
type brokerStates struct {
	mu sync.Mutex
	at map[int32]map[server.BrokerState]time.Time
}

func newBrokerStates() *brokerStates {
	return &brokerStates{at: map[int32]map[server.BrokerState]time.Time{}}
}

// hook is broker id's lifecycle listener.
func (s *brokerStates) hook(id int32) func(server.LifecycleEvent) {
	return func(ev server.LifecycleEvent) {
		if ev.Kind != server.EventStateChanged {
			return
		}
		now := time.Now()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.at[id] == nil {
			s.at[id] = map[server.BrokerState]time.Time{}
		}
		s.at[id][ev.State] = now
	}
}

// shutdownTook is broker id's last controlled shutdown, PENDING to
// SHUTTING_DOWN.
func (s *brokerStates) shutdownTook(id int32) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	from, ok1 := s.at[id][server.BrokerPendingControlledShutdown]
	to, ok2 := s.at[id][server.BrokerShuttingDown]
	if !ok1 || !ok2 || to.Before(from) {
		return 0, fmt.Errorf("broker %d showed no controlled shutdown", id)
	}
	return to.Sub(from), nil
}

// busiestLeader is the broker of brokers, other than skip, that leads
// the most partitions in img, with its counts.
func busiestLeader(img *image.MetadataImage, brokers []int32, skip int32) ControlledShutdownSample {
	led, inISR := map[int32]int{}, map[int32]int{}
	for _, t := range img.Topics().Topics() {
		for _, p := range t.Partitions() {
			led[p.Leader]++
			for _, r := range p.Isr {
				inISR[r]++
			}
		}
	}
	best := ControlledShutdownSample{Broker: -1}
	for _, id := range brokers {
		if id != skip && (best.Broker == -1 || led[id] > best.Led) {
			best = ControlledShutdownSample{Broker: id, Led: led[id], InISR: inISR[id]}
		}
	}
	return best
}

// stopTimed stops srv, a controlled shutdown, and times it on states.
func stopTimed(ctx context.Context, srv *server.Server, states *brokerStates, s *ControlledShutdownSample) error {
	if err := srv.Stop(ctx); err != nil {
		return fmt.Errorf("stop broker %d: %w", srv.ID(), err)
	}
	took, err := states.shutdownTook(srv.ID())
	s.Took = took
	return err
}
