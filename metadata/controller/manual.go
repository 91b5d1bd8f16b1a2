package controller

import (
	"errors"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The controller's goroutine is a thin driver: woken by a post or its
// ticker, it calls what Step calls. A manual controller has no goroutine
// and no ticker, so a simulator runs it on its own schedule: it posts
// (HandleCommittedImage, HandleLeaderChange, Submit, CommitsDone) and
// calls Step at the virtual times it chooses, every TickInterval at least
// for the timers. What the controller does is the same either way; only
// who runs the loop, and when, differs.

// NewManual returns a controller whose loop runs only when the caller
// calls Step, on the caller's goroutine. Its appends go through app, and
// it never waits on their Done channels: the caller calls CommitsDone once
// appends may have completed (or failed), which queues the completions
// for the next Step, in log order. Config.Raft is ignored, and
// Config.Clock should be the caller's (virtual) clock. ReplicaLogInfo
// queries, which run on goroutines, are not for a manual controller.
func NewManual(cfg Config, app AppendFunc) (*QuorumController, error) {
	if app == nil {
		return nil, errors.New("controller: no AppendFunc to append with")
	}
	if cfg.ReplicaLogInfo != nil {
		return nil, errors.New("controller: a manual controller cannot ask brokers about their logs")
	}
	c, err := build(cfg, app)
	if err != nil {
		return nil, err
	}
	c.manual = true
	return c, nil
}

// Step runs everything posted so far, then the timers due at the
// controller's clock: one turn of the loop. Only a manual controller's
// caller may call it.
func (c *QuorumController) Step() {
	if !c.manual {
		panic("controller: Step on a controller that runs its own loop")
	}
	select {
	case <-c.stop:
		return
	default:
	}
	c.drain()
}

// CommitsDone tells a manual controller that some of its appends
// completed or failed; the next Step finishes them in log order.
func (c *QuorumController) CommitsDone() { c.box.post(c.finishCommitted) }

// TickInterval is how often the loop checks its deadlines (sessions,
// no-ops, elections): a manual controller's caller calls Step at least
// this often.
func (c *QuorumController) TickInterval() time.Duration { return c.tickEvery }

// Submit queues a request for the loop, as the wire handler does; respond
// hears its response on the loop's goroutine (a manual controller's: the
// one calling Step). After Close it is answered NOT_CONTROLLER at once.
func (c *QuorumController) Submit(body kmsg.Request, respond func(kmsg.Response)) {
	if !c.box.post(func() { c.handle(body, respond) }) {
		respond(errorResponse(body, kerr.NotController.Code, ""))
	}
}

// serve queues a request for the loop.
func (c *QuorumController) serve(req *wire.Request) { c.Submit(req.Body, req.Respond) }
