package cluster

import (
	"context"
	"fmt"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// doVoters adds a controller to a dynamic quorum or removes one.
func (p *Playground) doVoters(ctx context.Context, v *view.View, a Action) (Result, error) {
	if a.Kind == ActAddController {
		if !a.Node.IsZero() || !a.Peer.IsZero() {
			return Result{}, Errorf(ErrBadAction, "controllers add takes no node: the new controller gets the next id")
		}
		id, props, err := p.engine.AddController(ctx, !a.Observer)
		if err != nil {
			return Result{}, fmt.Errorf("add a controller: %w", err)
		}
		msg := fmt.Sprintf("controller %d joined as an observer, caught up and was added to the voters (AddRaftVoter)", id)
		if a.Observer {
			msg = fmt.Sprintf("controller %d joined as an observer; add it to the voters with kafka-metadata-quorum --bootstrap-controller LEADER add-controller --command-config %s", id, props)
		}
		p.publish(EventVoters, id, msg)
		return Result{Nodes: []int32{id}, Message: msg}, nil
	}
	if !a.Peer.IsZero() {
		return Result{}, Errorf(ErrBadAction, "controllers remove takes one node")
	}
	id, err := a.Node.Resolve(v)
	if err != nil {
		return Result{}, err
	}
	if err := p.engine.RemoveController(ctx, id); err != nil {
		return Result{}, fmt.Errorf("remove controller %d: %w", id, err)
	}
	msg := fmt.Sprintf("controller %d was removed from the voters (RemoveRaftVoter); while it runs it is an observer", id)
	p.publish(EventVoters, id, msg)
	return Result{Nodes: []int32{id}, Message: msg}, nil
}
