package cluster

import (
	"context"
	"fmt"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// doVoters adds a controller to a dynamic quorum or removes one.
func (p *Playground) doVoters(ctx context.Context, v *view.View, a Action) (Result, error) {
	if a.Kind == ActAddController {
		return p.addController(ctx, v, a)
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

// upgradeKRaftVersion makes a static quorum dynamic.
func (p *Playground) upgradeKRaftVersion(ctx context.Context) (Result, error) {
	if err := p.engine.UpgradeKRaftVersion(ctx); err != nil {
		return Result{}, fmt.Errorf("upgrade kraft.version: %w", err)
	}
	msg := "kraft.version 1 committed (KRaftVersionRecord and a VotersRecord naming each voter's directory id and listeners): the quorum is dynamic"
	p.publish(EventVoters, -1, msg)
	return Result{Message: msg}, nil
}

// addController starts a new controller and adds it to the voters or,
// given a node, adds that running observer controller with the directory
// id its folder has now.
func (p *Playground) addController(ctx context.Context, v *view.View, a Action) (Result, error) {
	if !a.Peer.IsZero() {
		return Result{}, Errorf(ErrBadAction, "controllers add takes at most one node")
	}
	var existing int32
	if !a.Node.IsZero() {
		id, err := a.Node.Resolve(v)
		if err != nil {
			return Result{}, err
		}
		existing = id
	}
	id, props, err := p.engine.AddController(ctx, existing, !a.Observer)
	if err != nil {
		if existing != 0 {
			return Result{}, fmt.Errorf("add controller %d: %w", existing, err)
		}
		return Result{}, fmt.Errorf("add a controller: %w", err)
	}
	var msg string
	switch {
	case existing != 0 && a.Observer:
		msg = fmt.Sprintf("controller %d runs as an observer; add it to the voters with kafka-metadata-quorum --bootstrap-controller LEADER add-controller --command-config %s", id, props)
	case existing != 0:
		msg = fmt.Sprintf("controller %d, an observer that had caught up, was added to the voters with its folder's directory id (AddRaftVoter)", id)
	case a.Observer:
		msg = fmt.Sprintf("controller %d joined as an observer; add it to the voters with kafka-metadata-quorum --bootstrap-controller LEADER add-controller --command-config %s", id, props)
	default:
		msg = fmt.Sprintf("controller %d joined as an observer, caught up and was added to the voters (AddRaftVoter)", id)
	}
	p.publish(EventVoters, id, msg)
	return Result{Nodes: []int32{id}, Message: msg}, nil
}
