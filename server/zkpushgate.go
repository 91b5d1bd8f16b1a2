package server

import (
	"slices"
	"sync"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pushGate holds the controller's pushes (LeaderAndIsr, UpdateMetadata,
// StopReplica) that reach a ZooKeeper-era broker before its incarnation
// first registered, and hands them to its metadata, in the order they
// came, once it has: then the fence knows the incarnation's broker epoch
// and refuses those addressed to the previous incarnation's
// (STALE_BROKER_EPOCH). Kafka 3.9's broker serves no request before it
// registered: KafkaServer.startup enables the socket server's request
// processing only after KafkaZkClient.registerBroker, and the
// controller's RequestSendThread keeps trying until it can send. A push
// that comes before is for the previous incarnation, whose session
// ZooKeeper still holds; taken, a LeaderAndIsr would make this
// incarnation lead in that incarnation's leader epoch with a log the
// crash may have cut short. Refusing it outright could lose a push for
// this incarnation that the controller sends between the registration
// and the broker learning its epoch, so it waits. Its methods are safe
// for concurrent use.
type pushGate struct {
	// apply hands a push to the metadata and answers it.
	apply func(*wire.Request)

	mu     sync.Mutex
	open   bool
	opened chan struct{}
	held   []*wire.Request
}

func newPushGate(apply func(*wire.Request)) *pushGate {
	return &pushGate{apply: apply, opened: make(chan struct{})}
}

// admit applies req at once if the gate is open, and otherwise holds it:
// it reports whether it held it.
func (g *pushGate) admit(req *wire.Request) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		// Under mu, so that no push overtakes those still being let
		// through.
		g.apply(req)
		return false
	}
	g.held = append(g.held, req)
	return true
}

// openGate lets the held pushes through, in order, and every push after
// them: the incarnation has registered.
func (g *pushGate) openGate() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return
	}
	g.open = true
	close(g.opened)
	for _, req := range g.held {
		g.apply(req)
	}
	g.held = nil
}

// refuse answers req with STALE_BROKER_EPOCH if the gate still holds it:
// the incarnation did not register in time, or it stops. The controller
// sends it again if it still means it.
func (g *pushGate) refuse(req *wire.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.held, req)
	if i < 0 {
		return
	}
	g.held = slices.Delete(g.held, i, i+1)
	req.Respond(staleBrokerEpoch(req.Body))
}

// holding is how many pushes the gate holds.
func (g *pushGate) holding() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}

// staleBrokerEpoch is a push's answer when it is refused for its broker
// epoch.
func staleBrokerEpoch(body kmsg.Request) kmsg.Response {
	code := kerr.StaleBrokerEpoch.Code
	switch body.(type) {
	case *kmsg.LeaderAndISRRequest:
		resp := kmsg.NewPtrLeaderAndISRResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.UpdateMetadataRequest:
		resp := kmsg.NewPtrUpdateMetadataResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.StopReplicaRequest:
		resp := kmsg.NewPtrStopReplicaResponse()
		resp.ErrorCode = code
		return resp
	}
	return nil
}
