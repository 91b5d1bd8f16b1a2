package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// ActReassign moves partitions to other replicas, or cancels, lists or
// verifies such moves, as kafka-reassign-partitions does (its --execute,
// --cancel, --list and --verify): AlterPartitionReassignments and
// ListPartitionReassignments, forwarded by a broker to the active
// controller, with the replication throttle configs set around it.
const ActReassign ActionKind = "reassign"

// EventReassign: someone started, cancelled or verified a partition
// reassignment; the message says what each partition's answer was.
const EventReassign EventKind = "reassign"

// ReassignMode is what a reassign action does.
type ReassignMode string

// The reassign modes, kafka-reassign-partitions' own.
const (
	// ReassignExecute moves the partitions to Action.Replicas.
	ReassignExecute ReassignMode = ""
	// ReassignCancel cancels the partitions' reassignments and removes
	// the throttles.
	ReassignCancel ReassignMode = "cancel"
	// ReassignList lists the reassignments in progress.
	ReassignList ReassignMode = "list"
	// ReassignVerify says whether the partitions' reassignments are done
	// and, once none is left, removes the throttles.
	ReassignVerify ReassignMode = "verify"
)

// Move is one partition's target replicas; nil Replicas cancels its
// reassignment.
type Move struct {
	Partition view.TopicPartition
	Replicas  []int32
}

// MoveResult is one partition's answer to an AlterPartitionReassignments.
type MoveResult struct {
	Partition view.TopicPartition
	// Error is Kafka's error name and message, empty when it was taken.
	Error string
}

// Reassignment is a partition reassignment in progress, as
// ListPartitionReassignments tells it.
type Reassignment struct {
	Partition view.TopicPartition
	// Replicas are the partition's replicas: the target ones, then those
	// being removed.
	Replicas, Adding, Removing []int32
}

// maxThrottle bounds --throttle: a rate in bytes a second that fits the
// configs' LONG.
const maxThrottle = int64(1) << 62

func (p *Playground) doReassign(ctx context.Context, v *view.View, a Action) (Result, error) {
	tps, err := actionPartitions(a)
	if err != nil {
		return Result{}, err
	}
	if a.Throttle < 0 || a.Throttle > maxThrottle {
		return Result{}, Errorf(ErrBadAction, "%s: the throttle is a rate in bytes a second, 1 to %d", a.Kind, maxThrottle)
	}
	if a.Throttle > 0 && a.Reassign != ReassignExecute {
		return Result{}, Errorf(ErrBadAction, "%s: a throttle goes with a reassignment to replicas only", a.Kind)
	}
	if len(a.Replicas) > 0 && a.Reassign != ReassignExecute {
		return Result{}, Errorf(ErrBadAction, "%s --%s takes no replicas", a.Kind, a.Reassign)
	}
	switch a.Reassign {
	case ReassignExecute:
		if len(tps) == 0 || len(a.Replicas) == 0 {
			return Result{}, Errorf(ErrBadAction, "%s: name the partitions and their replicas", a.Kind)
		}
		moves := make([]Move, len(tps))
		for i, tp := range tps {
			moves[i] = Move{Partition: tp, Replicas: a.Replicas}
		}
		res, err := p.alterReassignments(ctx, moves, a.Throttle, "reassignment to "+idList(a.Replicas))
		if err != nil {
			return Result{}, err
		}
		p.publish(EventReassign, 0, res.Message)
		return res, nil
	case ReassignCancel:
		if len(tps) == 0 {
			return Result{}, Errorf(ErrBadAction, "%s --cancel: name the partitions", a.Kind)
		}
		moves := make([]Move, len(tps))
		for i, tp := range tps {
			moves[i] = Move{Partition: tp}
		}
		res, err := p.alterReassignments(ctx, moves, 0, "reassignment cancelled")
		if err != nil {
			return Result{}, err
		}
		// kafka-reassign-partitions --cancel removes the throttles too.
		if err := p.engine.ClearReplicationThrottles(ctx, topicsOf(tps, v)); err != nil {
			return Result{}, fmt.Errorf("remove the replication throttles: %w", err)
		}
		res.Message += "; replication throttles removed"
		p.publish(EventReassign, 0, res.Message)
		return res, nil
	case ReassignList:
		if len(tps) > 0 {
			return Result{}, Errorf(ErrBadAction, "%s --list lists every reassignment: it takes no partitions", a.Kind)
		}
		rs, err := p.engine.ListReassignments(ctx, nil)
		if err != nil {
			return Result{}, fmt.Errorf("list reassignments: %w", err)
		}
		return Result{Message: reassignmentsText(rs)}, nil
	case ReassignVerify:
		return p.verifyReassignments(ctx, v, tps)
	}
	return Result{}, Errorf(ErrBadAction, "%s: unknown mode %q", a.Kind, a.Reassign)
}

// alterReassignments sends the moves and says what each partition's
// answer was; the caller publishes it.
func (p *Playground) alterReassignments(ctx context.Context, moves []Move, throttle int64, what string) (Result, error) {
	res, err := p.engine.AlterReassignments(ctx, moves, throttle)
	if err != nil {
		return Result{}, fmt.Errorf("alter partition reassignments: %w", err)
	}
	var parts []string
	for _, r := range res {
		if r.Error == "" {
			parts = append(parts, r.Partition.String()+" "+what)
		} else {
			parts = append(parts, r.Partition.String()+" "+r.Error)
		}
	}
	msg := strings.Join(parts, ", ")
	if throttle > 0 {
		msg += fmt.Sprintf("; the inter-broker throttle limit was set to %d B/s", throttle)
	}
	return Result{Message: msg}, nil
}

// verifyReassignments is --verify: the partitions named (every one when
// none) still being reassigned, or, once none is, the throttles removed.
func (p *Playground) verifyReassignments(ctx context.Context, v *view.View, tps []view.TopicPartition) (Result, error) {
	rs, err := p.engine.ListReassignments(ctx, tps)
	if err != nil {
		return Result{}, fmt.Errorf("list reassignments: %w", err)
	}
	if len(rs) > 0 {
		var parts []string
		for _, r := range rs {
			parts = append(parts, "reassignment of partition "+r.Partition.String()+" is still in progress")
		}
		return Result{Message: strings.Join(parts, "; ")}, nil
	}
	if err := p.engine.ClearReplicationThrottles(ctx, topicsOf(tps, v)); err != nil {
		return Result{}, fmt.Errorf("remove the replication throttles: %w", err)
	}
	msg := "no reassignment in progress; replication throttles removed"
	if len(tps) > 0 {
		msg = fmt.Sprintf("reassignment of %s complete; replication throttles removed", tpList(tps))
	}
	p.publish(EventReassign, 0, msg)
	return Result{Message: msg}, nil
}

// topicsOf are the topics of tps, every topic of v when none.
func topicsOf(tps []view.TopicPartition, v *view.View) []string {
	var out []string
	add := func(name string) {
		for _, n := range out {
			if n == name {
				return
			}
		}
		out = append(out, name)
	}
	if len(tps) == 0 {
		for _, t := range v.Topics {
			add(t.Name)
		}
	}
	for _, tp := range tps {
		add(tp.Topic)
	}
	return out
}

// reassignmentsText is --list's answer, worded as
// kafka-reassign-partitions --list words it.
func reassignmentsText(rs []Reassignment) string {
	if len(rs) == 0 {
		return "No partition reassignments found."
	}
	lines := []string{"Current partition reassignments:"}
	for _, r := range rs {
		line := fmt.Sprintf("%s: replicas: %s.", r.Partition, idList(r.Replicas))
		if len(r.Adding) > 0 {
			line += fmt.Sprintf(" adding: %s.", idList(r.Adding))
		}
		if len(r.Removing) > 0 {
			line += fmt.Sprintf(" removing: %s.", idList(r.Removing))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func idList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

func tpList(tps []view.TopicPartition) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return strings.Join(s, ",")
}

// reassignString spells a reassign action as its CLI line.
func (a Action) reassignString() string {
	s := "reassign"
	switch a.Reassign {
	case ReassignList:
		return s + " --list"
	case ReassignCancel:
		s += " --cancel"
	case ReassignVerify:
		s += " --verify"
	}
	for _, tp := range a.TopicPartitions {
		s += " " + tp
	}
	if len(a.Replicas) > 0 {
		s += " --replicas " + idList(a.Replicas)
	}
	if a.Throttle > 0 {
		s += fmt.Sprintf(" --throttle %d", a.Throttle)
	}
	return s
}
