package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The replication throttle configs kafka-reassign-partitions sets and
// removes (its BROKER_LEVEL_THROTTLES and TOPIC_LEVEL_THROTTLES).
const (
	leaderThrottledRate       = "leader.replication.throttled.rate"
	followerThrottledRate     = "follower.replication.throttled.rate"
	alterLogDirsRate          = "replica.alter.log.dirs.io.max.bytes.per.second"
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

// partitionMove is a partition's move as kafka-reassign-partitions
// reckons it (its PartitionMove): the replicas it moves from, which the
// leader throttle covers, and those it moves to, which the follower
// throttle covers.
type partitionMove struct {
	sources, destinations []int32
}

// AlterReassignments implements cluster.Engine the way
// kafka-reassign-partitions --execute goes: with a throttle, the topics'
// throttled replicas (every move in progress and these, sources as
// leader replicas and destinations as follower replicas) and the rates of
// every broker involved are set first (IncrementalAlterConfigs); then
// AlterPartitionReassignments.
func (e *engine) AlterReassignments(ctx context.Context, moves []cluster.Move, throttle int64) ([]cluster.MoveResult, error) {
	adm, err := e.admin()
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	if throttle > 0 {
		if err := setReassignmentThrottle(ctx, adm, moves, throttle); err != nil {
			return nil, err
		}
	}
	var req kadm.AlterPartitionAssignmentsReq
	for _, m := range moves {
		req.Assign(m.Partition.Topic, m.Partition.Partition, m.Replicas)
	}
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return nil, refusal(err, "")
	}
	var out []cluster.MoveResult
	for _, r := range resp.Sorted() {
		res := cluster.MoveResult{Partition: view.TopicPartition{Topic: r.Topic, Partition: r.Partition}}
		var ke *kerr.Error
		switch {
		case errors.As(r.Err, &ke) && r.ErrMessage != "":
			res.Error = ke.Message + ": " + r.ErrMessage
		case errors.As(r.Err, &ke):
			res.Error = ke.Message
		case r.Err != nil:
			res.Error = r.Err.Error()
		}
		out = append(out, res)
	}
	return out, nil
}

// setReassignmentThrottle is kafka-reassign-partitions'
// modifyReassignmentThrottle.
func setReassignmentThrottle(ctx context.Context, adm *kadm.Client, moves []cluster.Move, throttle int64) error {
	current, err := listReassignments(ctx, adm, nil)
	if err != nil {
		return err
	}
	// calculateCurrentMoveMap, then calculateProposedMoveMap.
	moveMap := map[string]map[int32]partitionMove{}
	put := func(tp view.TopicPartition, m partitionMove) {
		if moveMap[tp.Topic] == nil {
			moveMap[tp.Topic] = map[int32]partitionMove{}
		}
		moveMap[tp.Topic][tp.Partition] = m
	}
	for _, r := range current {
		sources := slices.DeleteFunc(slices.Clone(r.Replicas), func(b int32) bool { return slices.Contains(r.Adding, b) })
		put(r.Partition, partitionMove{sources: sources, destinations: slices.Clone(r.Adding)})
	}
	var topics []string
	for _, m := range moves {
		if !slices.Contains(topics, m.Partition.Topic) {
			topics = append(topics, m.Partition.Topic)
		}
	}
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return refusal(err, "")
	}
	for _, m := range moves {
		var sources []int32
		if cur, ok := moveMap[m.Partition.Topic][m.Partition.Partition]; ok {
			sources = cur.sources
		} else {
			t, ok := md.Topics[m.Partition.Topic]
			if !ok || t.Err != nil {
				continue // the reassignment itself says what is wrong
			}
			p, ok := t.Partitions[m.Partition.Partition]
			if !ok {
				continue
			}
			sources = p.Replicas
		}
		dest := slices.DeleteFunc(slices.Clone(m.Replicas), func(b int32) bool { return slices.Contains(sources, b) })
		put(m.Partition, partitionMove{sources: sources, destinations: dest})
	}
	brokers := map[int32]bool{}
	for _, topic := range slices.Sorted(maps.Keys(moveMap)) {
		var leader, follower []string
		for id, m := range moveMap[topic] {
			for _, b := range m.sources {
				leader = append(leader, fmt.Sprintf("%d:%d", id, b))
				brokers[b] = true
			}
			for _, b := range m.destinations {
				follower = append(follower, fmt.Sprintf("%d:%d", id, b))
				brokers[b] = true
			}
		}
		// Kafka joins the entries of a TreeSet, in string order.
		slices.Sort(leader)
		slices.Sort(follower)
		lv, fv := strings.Join(leader, ","), strings.Join(follower, ",")
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: leaderThrottledReplicas, Value: &lv},
			{Op: kadm.SetConfig, Name: followerThrottledReplicas, Value: &fv},
		}, topic)
		if err := configsErr(resp, err); err != nil {
			return fmt.Errorf("set the throttled replicas of topic %s: %w", topic, err)
		}
	}
	rate := strconv.FormatInt(throttle, 10)
	ids := slices.Sorted(maps.Keys(brokers))
	if len(ids) == 0 {
		return nil
	}
	resp, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: leaderThrottledRate, Value: &rate},
		{Op: kadm.SetConfig, Name: followerThrottledRate, Value: &rate},
	}, ids...)
	if err := configsErr(resp, err); err != nil {
		return fmt.Errorf("set the replication throttle rate: %w", err)
	}
	return nil
}

// ListReassignments implements cluster.Engine.
func (e *engine) ListReassignments(ctx context.Context, partitions []view.TopicPartition) ([]cluster.Reassignment, error) {
	adm, err := e.admin()
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	return listReassignments(ctx, adm, partitions)
}

// listReassignments lists the reassignments of the partitions, of every
// partition of every topic when none.
func listReassignments(ctx context.Context, adm *kadm.Client, partitions []view.TopicPartition) ([]cluster.Reassignment, error) {
	set := make(kadm.TopicsSet)
	if len(partitions) == 0 {
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return nil, refusal(err, "")
		}
		for _, t := range topics {
			for p := range t.Partitions {
				set.Add(t.Topic, p)
			}
		}
	}
	for _, tp := range partitions {
		set.Add(tp.Topic, tp.Partition)
	}
	resp, err := adm.ListPartitionReassignments(ctx, set)
	if err != nil {
		return nil, refusal(err, "")
	}
	var out []cluster.Reassignment
	for _, r := range resp.Sorted() {
		out = append(out, cluster.Reassignment{
			Partition: view.TopicPartition{Topic: r.Topic, Partition: r.Partition},
			Replicas:  r.Replicas, Adding: r.AddingReplicas, Removing: r.RemovingReplicas,
		})
	}
	return out, nil
}

// ClearReplicationThrottles implements cluster.Engine as
// kafka-reassign-partitions' clearAllThrottles: the three broker rates of
// every broker, the two throttled-replica lists of every topic named.
func (e *engine) ClearReplicationThrottles(ctx context.Context, topics []string) error {
	adm, err := e.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return refusal(err, "")
	}
	if ids := brokers.NodeIDs(); len(ids) > 0 {
		resp, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.DeleteConfig, Name: leaderThrottledRate},
			{Op: kadm.DeleteConfig, Name: followerThrottledRate},
			{Op: kadm.DeleteConfig, Name: alterLogDirsRate},
		}, ids...)
		if err := configsErr(resp, err); err != nil {
			return fmt.Errorf("clear the broker-level throttles: %w", err)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.DeleteConfig, Name: leaderThrottledReplicas},
		{Op: kadm.DeleteConfig, Name: followerThrottledReplicas},
	}, topics...)
	if err := configsErr(resp, err); err != nil {
		return fmt.Errorf("clear the topic-level throttles: %w", err)
	}
	return nil
}

// configsErr is the first error of an IncrementalAlterConfigs.
func configsErr(resp kadm.AlterConfigsResponses, err error) error {
	if err != nil {
		return refusal(err, "")
	}
	for _, r := range resp {
		if r.Err != nil {
			return refusal(r.Err, r.ErrMessage)
		}
	}
	return nil
}
