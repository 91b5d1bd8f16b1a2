package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// ActElectLeaders asks the active controller to elect leaders, as
// kafka-leader-election does (ElectLeaders): the preferred replica of each
// partition named (every partition without names), or, with Unclean, a
// leader for each leaderless one, from outside the ISR if need be.
const ActElectLeaders ActionKind = "elect-leaders"

// EventElectLeaders: someone asked for leader elections; the message says
// what each partition's answer was.
const EventElectLeaders EventKind = "elect-leaders"

// Election is one partition's answer to an ElectLeaders.
type Election struct {
	Partition view.TopicPartition
	// Error is Kafka's error name (ELECTION_NOT_NEEDED,
	// PREFERRED_LEADER_NOT_AVAILABLE, …), empty when a leader was elected.
	Error string
}

func (p *Playground) doElect(ctx context.Context, a Action) (Result, error) {
	tps, err := actionPartitions(a)
	if err != nil {
		return Result{}, err
	}
	res, err := p.engine.ElectLeaders(ctx, a.Unclean, tps)
	if err != nil {
		return Result{}, fmt.Errorf("elect leaders: %w", err)
	}
	kind := "preferred"
	if a.Unclean {
		kind = "unclean"
	}
	var parts []string
	for _, e := range res {
		if e.Error == "" {
			parts = append(parts, e.Partition.String()+" elected")
		} else {
			parts = append(parts, e.Partition.String()+" "+e.Error)
		}
	}
	msg := fmt.Sprintf("%s leader election: ", kind)
	if len(parts) == 0 {
		msg += "every partition has its leader already"
	} else {
		msg += strings.Join(parts, ", ")
	}
	p.publish(EventElectLeaders, 0, msg)
	return Result{Message: msg}, nil
}

// actionPartitions reads the partitions an action on partitions (elect,
// reassign) names, refusing nodes and a topic.
func actionPartitions(a Action) ([]view.TopicPartition, error) {
	if !a.Node.IsZero() || !a.Peer.IsZero() || a.OneWay || a.Topic != "" {
		return nil, Errorf(ErrBadAction, "%s takes partitions (TOPIC-P), not nodes or a topic", a.Kind)
	}
	tps := make([]view.TopicPartition, len(a.TopicPartitions))
	for i, s := range a.TopicPartitions {
		tp, err := view.ParseTopicPartition(s)
		if err != nil {
			return nil, Errorf(ErrBadAction, "%s: %v", a.Kind, err)
		}
		tps[i] = tp
	}
	return tps, nil
}
