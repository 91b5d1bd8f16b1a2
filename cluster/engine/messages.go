package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// HeldMessages implements cluster.Engine.
func (e *engine) HeldMessages() []view.Message {
	now := e.clock.Now()
	held := e.links.HeldMessages()
	out := make([]view.Message, len(held))
	for i, h := range held {
		out[i] = messageView(h, now)
	}
	return out
}

// StepMessages implements cluster.Engine.
func (e *engine) StepMessages(f cluster.MessageFilter) ([]view.Message, error) {
	var held []wire.Held
	if f.All {
		held = e.links.StepAll()
	} else {
		var err error
		if held, err = e.links.Step(e.match(f)); err != nil {
			return nil, noneMatches(f, err)
		}
	}
	now := e.clock.Now()
	out := make([]view.Message, len(held))
	for i, h := range held {
		out[i] = messageView(h, now)
	}
	return out, nil
}

// DropMessage implements cluster.Engine.
func (e *engine) DropMessage(f cluster.MessageFilter) (view.Message, error) {
	h, err := e.links.Drop(e.match(f))
	if err != nil {
		return view.Message{}, noneMatches(f, err)
	}
	return messageView(h, e.clock.Now()), nil
}

func (e *engine) match(f cluster.MessageFilter) func(wire.Held) bool {
	return func(h wire.Held) bool { return f.Match(messageView(h, time.Time{})) }
}

func noneMatches(f cluster.MessageFilter, err error) error {
	if errors.Is(err, wire.ErrNoHeldMessage) {
		if s := f.String(); s != "" {
			return fmt.Errorf("%w %s (kraftlab messages lists them)", cluster.ErrNoHeldMessage, s)
		}
		return fmt.Errorf("%w: the links hold none", cluster.ErrNoHeldMessage)
	}
	return err
}

// messageView is a held message as a view shows it; now is the cluster
// time (zero leaves HeldMs 0).
func messageView(h wire.Held, now time.Time) view.Message {
	m := view.Message{
		ID: h.ID, From: h.Link.From, To: h.Link.To, Conn: h.Conn, Direction: view.MessageRequest,
		API: pushrpc.NameForKey(h.Key), Version: h.Version, CorrelationID: h.Corr, Bytes: h.Bytes, DecodeError: h.Err,
	}
	if h.Dir == wire.DirResponse {
		m.Direction = view.MessageResponse
	}
	if !now.IsZero() {
		m.HeldMs = max(now.Sub(h.Since).Milliseconds(), 0)
	}
	for _, f := range h.Fields {
		m.Fields = append(m.Fields, view.MessageField{Name: f.Name, Value: f.Value})
	}
	return m
}
