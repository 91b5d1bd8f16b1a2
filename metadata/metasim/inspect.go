package metasim

import (
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
)

// What a playground shows of a simulated cluster (kraftlab up --sim): each
// running node's parts, read between events.

// Loader is a running node's metadata loader, nil while it is down.
func (s *Sim) Loader(id int32) *loader.Loader {
	if m := s.members[id]; m != nil && m.alive() {
		return m.loader
	}
	return nil
}

// Controller is a running controller's QuorumController, nil while it is
// down or on a broker.
func (s *Sim) Controller(id int32) *controller.QuorumController {
	if m := s.members[id]; m != nil && m.alive() {
		return m.ctl
	}
	return nil
}

// BrokerLifecycle is where a running broker's lifecycle manager stands.
type BrokerLifecycle struct {
	// Epoch is the broker epoch it registered with, -1 before.
	Epoch int64
	// Fenced is what the last heartbeat answer told it.
	Fenced bool
	// ShuttingDown: a controlled shutdown is under way.
	ShuttingDown bool
}

// Lifecycle is a running broker's lifecycle manager's state; ok is false
// while it is down.
func (s *Sim) Lifecycle(id int32) (l BrokerLifecycle, ok bool) {
	b := s.brokers[id]
	if b == nil || !b.m.alive() {
		return BrokerLifecycle{}, false
	}
	return BrokerLifecycle{Epoch: b.epoch, Fenced: b.fenced, ShuttingDown: b.stopping}, true
}

// ControlledShutdown begins a running broker's controlled shutdown: it
// asks the active controller to move its leaderships away, then stops.
// It reports false for a node that is no running broker.
func (s *Sim) ControlledShutdown(id int32) bool {
	b := s.brokers[id]
	if b == nil || !b.m.alive() {
		return false
	}
	s.say("controlled shutdown of broker %d", id)
	b.controlledShutdown()
	return true
}

// SetLink replaces the faults of the link from one node to another.
func (s *Sim) SetLink(from, to int32, f raftsim.LinkFault) {
	s.say("link %d -> %d: %+v", from, to, f)
	s.rc.SetLink(from, to, f)
}
