package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kraftlab/kraftlab/cluster"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// The engine's topic actions go the way a user's own Kafka tool goes: a
// franz-go admin client bootstraps from the running brokers, learns the
// cluster from their Metadata, and sends CreateTopics or DeleteTopics,
// which the broker forwards to the active controller. The client is not a
// node, so the playground's link faults do not touch it.

// admin returns an admin client seeded with the running brokers that
// reach a controller, or with every running broker if none does: a broker
// cut off from the controllers still answers Metadata from its stale
// image, which may name it the controller to send CreateTopics to, and
// its forward can only time out.
func (e *engine) admin() (*kadm.Client, error) {
	var seeds, cutOff []string
	for _, n := range e.all() {
		if n.kind != view.KindBroker || !n.srv.Running() {
			continue
		}
		if e.reachesController(n.id) {
			seeds = append(seeds, n.srv.Addr())
		} else {
			cutOff = append(cutOff, n.srv.Addr())
		}
	}
	if len(seeds) == 0 {
		seeds = cutOff
	}
	if len(seeds) == 0 {
		return nil, cluster.Errorf(cluster.ErrNodeState, "no broker is running to send the request to")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("kraftlab"))
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	return kadm.NewClient(cl), nil
}

// reachesController reports whether node id has a link up both ways to a
// controller.
func (e *engine) reachesController(id int32) bool {
	faults := e.links.Faults()
	for _, c := range e.all() {
		if c.kind != view.KindController {
			continue
		}
		if !faults[wire.LinkID{From: id, To: c.id}].Down && !faults[wire.LinkID{From: c.id, To: id}].Down {
			return true
		}
	}
	return false
}

// CreateTopic implements Engine.
func (e *engine) CreateTopic(ctx context.Context, spec cluster.TopicSpec) error {
	adm, err := e.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	var configs map[string]*string
	if len(spec.Configs) > 0 {
		configs = make(map[string]*string, len(spec.Configs))
		for k, v := range spec.Configs {
			configs[k] = &v
		}
	}
	resp, err := adm.CreateTopic(ctx, spec.Partitions, spec.ReplicationFactor, configs, spec.Name)
	return refusal(err, resp.ErrMessage)
}

// DeleteTopic implements Engine.
func (e *engine) DeleteTopic(ctx context.Context, name string) error {
	adm, err := e.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	resp, err := adm.DeleteTopic(ctx, name)
	return refusal(err, resp.ErrMessage)
}

// refusal marks Kafka's errors as the cluster's refusals, with the
// controller's message when it sent one.
func refusal(err error, msg string) error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err
	}
	if msg != "" {
		return cluster.Errorf(cluster.ErrRefused, "%s: %s", ke.Message, msg)
	}
	return cluster.Errorf(cluster.ErrRefused, "%s: %s", ke.Message, ke.Description)
}

// ElectLeaders implements cluster.Engine through kadm, as
// kafka-leader-election sends ElectLeaders.
func (e *engine) ElectLeaders(ctx context.Context, unclean bool, partitions []view.TopicPartition) ([]cluster.Election, error) {
	adm, err := e.admin()
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	how := kadm.ElectPreferredReplica
	if unclean {
		how = kadm.ElectLiveReplica
	}
	var set kadm.TopicsSet
	if len(partitions) > 0 {
		set = make(kadm.TopicsSet)
		for _, tp := range partitions {
			set.Add(tp.Topic, tp.Partition)
		}
	}
	res, err := adm.ElectLeaders(ctx, how, set)
	if err != nil {
		return nil, refusal(err, "")
	}
	var all []kadm.ElectLeadersResult
	for _, ps := range res {
		for _, r := range ps {
			all = append(all, r)
		}
	}
	slices.SortFunc(all, func(a, b kadm.ElectLeadersResult) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	var out []cluster.Election
	for _, tp := range all {
		el := cluster.Election{Partition: view.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}}
		var ke *kerr.Error
		if errors.As(tp.Err, &ke) {
			el.Error = ke.Message
		} else if tp.Err != nil {
			el.Error = tp.Err.Error()
		}
		out = append(out, el)
	}
	return out, nil
}
