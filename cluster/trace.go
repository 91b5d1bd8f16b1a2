package cluster

import (
	"context"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// Tracer gives the messages that crossed the links between nodes, for
// the space-time diagram. The Playground and the control API's client
// implement it.
type Tracer interface {
	// Trace returns the traced messages q picks, oldest first, with the
	// playground's nodes.
	Trace(ctx context.Context, q TraceQuery) (view.Trace, error)
}

// TraceQuery picks a window of the trace; its zero value picks every
// message the trace keeps.
type TraceQuery struct {
	// Last keeps only the last Last messages; 0 keeps all.
	Last int `json:"last,omitempty"`
	// Since keeps only the messages sent in the last Since of cluster
	// time; 0 keeps all.
	Since time.Duration `json:"since,omitempty"`
}

// Validate refuses a negative window.
func (q TraceQuery) Validate() error {
	switch {
	case q.Last < 0:
		return Errorf(ErrBadAction, "last %d: want a number of messages, 0 for all", q.Last)
	case q.Since < 0:
		return Errorf(ErrBadAction, "since %v: want a duration of cluster time, 0 for the whole trace", q.Since)
	}
	return nil
}

// Trace implements Tracer.
func (p *Playground) Trace(_ context.Context, q TraceQuery) (view.Trace, error) {
	if p.closed.Load() {
		return view.Trace{}, ErrClosed
	}
	if err := q.Validate(); err != nil {
		return view.Trace{}, err
	}
	last := q.Last
	if q.Since > 0 {
		last = 0 // the window in time first, then the count
	}
	t := p.engine.Trace(last)
	now := p.engine.Clock().Now() // a nil clock is the wall's
	t.NowUs = now.UnixMicro()
	if q.Since > 0 {
		from := now.Add(-q.Since).UnixMicro()
		i := 0
		for i < len(t.Messages) && t.Messages[i].SentUs < from {
			i++
		}
		t.Messages = t.Messages[i:]
		if q.Last > 0 && len(t.Messages) > q.Last {
			t.Messages = t.Messages[len(t.Messages)-q.Last:]
		}
	}
	for _, id := range p.cfg.ControllerIDs() {
		t.Nodes = append(t.Nodes, view.TraceNode{ID: id, Kind: view.KindController})
	}
	for _, id := range p.cfg.BrokerIDs() {
		t.Nodes = append(t.Nodes, view.TraceNode{ID: id, Kind: view.KindBroker})
	}
	return t, nil
}
