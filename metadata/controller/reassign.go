package controller

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// maxRecordsPerUserOp bounds the records one user request writes (Kafka's
// QuorumController.MAX_RECORDS_PER_USER_OP).
const maxRecordsPerUserOp = 10000

// alterPartitionReassignments is Kafka's ReplicationControlManager
// alterPartitionReassignments, what kafka-reassign-partitions --execute
// and --cancel send: each partition is reassigned, or its reassignment
// cancelled (no replicas given), on its own, each against the partition
// as it stands, and every change goes in one batch. A reassignment first
// adds the target replicas to the partition's replicas, marked adding,
// with the replicas leaving marked removing; it completes when an ISR
// change brings every adding replica in sync (the change builder's
// completion). One
// that the ISR already allows completes at once.
func (c *QuorumController) alterPartitionReassignments(r *kmsg.AlterPartitionAssignmentsRequest) outcome {
	resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
	resp.AllowReplicationFactorChange = r.AllowReplicationFactorChange
	o := outcome{resp: resp}
	img := c.st.working
	done, total := 0, 0
	for _, t := range r.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, tp := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = tp.Partition
			ch, evs, aerr := c.alterPartitionReassignment(img, t.Topic, tp, r.AllowReplicationFactorChange)
			if aerr == nil && ch != nil && len(o.records) >= maxRecordsPerUserOp {
				aerr = refuse(kerr.UnknownServerError, "")
			}
			total++
			if aerr != nil {
				c.log.Info("refusing a partition reassignment", "topic", t.Topic, "partition", tp.Partition,
					"error", aerr.err.Message, "message", aerr.msg)
				rp.ErrorCode = aerr.code()
				if aerr.msg != "" {
					rp.ErrorMessage = aerr.message()
				}
			} else {
				done++
				if ch != nil {
					o.records = append(o.records, ch)
					o.events = append(o.events, evs...)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	c.log.Info("altered partition reassignments", "succeeded", done, "of", total)
	return o
}

// alterPartitionReassignment is one partition's change (Kafka's
// alterPartitionReassignment): nil when nothing changes.
func (c *QuorumController) alterPartitionReassignment(img *image.MetadataImage, topic string,
	target kmsg.AlterPartitionAssignmentsRequestTopicPartition, allowRFChange bool) (*record.PartitionChangeRecord, []Event, *apiError) {
	t := img.Topics().TopicByName(topic)
	if t == nil {
		return nil, nil, refuse(kerr.UnknownTopicOrPartition, "Unable to find a topic named %s.", topic)
	}
	p := t.Partition(target.Partition)
	if p == nil {
		return nil, nil, refuse(kerr.UnknownTopicOrPartition, "Unable to find partition %s:%d.", topic, target.Partition)
	}
	if target.Replicas == nil {
		return c.cancelPartitionReassignment(img, t, target.Partition, p)
	}
	return c.changePartitionReassignment(img, t, target.Partition, p, target.Replicas, allowRFChange)
}

// cancelPartitionReassignment is Kafka's cancelPartitionReassignment: the
// partition goes back to its original replicas (PartitionReassignmentRevert),
// the adding replicas leaving it and its ISR. Where only adding replicas
// were in sync, that takes an unclean election, refused unless the topic
// allows one.
func (c *QuorumController) cancelPartitionReassignment(img *image.MetadataImage, t *image.TopicImage, id int32,
	p *image.PartitionRegistration) (*record.PartitionChangeRecord, []Event, *apiError) {
	if !reassigning(p) {
		return nil, nil, refuse(kerr.NoReassignmentInProgress, "")
	}
	to, isr, unclean, ok := revert(p)
	if !ok {
		return nil, nil, refuse(kerr.InvalidReplicaAssignment, "Invalid replica assignment: addingReplicas contains all replicas.")
	}
	el := c.electionFor(img, t.Name())
	if unclean && el != electionUnclean {
		return nil, nil, refuse(kerr.InvalidReplicaAssignment,
			"Unable to revert partition assignment for %s:%d because it would require an unclean leader election.", t.Name(), id)
	}
	b := c.changeFor(img, t, id, p, isr, leaderAcceptor(img, p, acceptableLeader(img, -1, -1)))
	b.to = to
	ch, how := b.build()
	if ch == nil {
		return nil, nil, nil
	}
	return ch, changeEvents(t.Name(), ch, p, how, "partition reassignment cancelled"), nil
}

// changePartitionReassignment is Kafka's changePartitionReassignment: the
// target replicas are checked (validateManualPartitionAssignment and,
// unless allowed, an unchanged replication factor), then the partition's
// replicas become the target followed by those leaving, with the adding
// and removing lists set; if the ISR already holds every target replica
// the reassignment completes in the same change.
func (c *QuorumController) changePartitionReassignment(img *image.MetadataImage, t *image.TopicImage, id int32,
	p *image.PartitionRegistration, target []int32, allowRFChange bool) (*record.PartitionChangeRecord, []Event, *apiError) {
	if aerr := checkReassignmentTarget(img, target); aerr != nil {
		return nil, nil, aerr
	}
	if !allowRFChange {
		if n := reassignmentSetSize(p); n != len(target) {
			return nil, nil, refuse(kerr.InvalidReplicationFactor, "The replication factor is changed from %d to %d", n, len(target))
		}
	}
	// Kafka's current assignment is the partition's replicas, those of an
	// earlier reassignment included.
	to := reassignmentTo(p.Replicas, target)
	to.dir = func(r int32) record.Uuid { return defaultDir(img, r) }
	b := c.changeFor(img, t, id, p, p.Isr, leaderAcceptor(img, p, acceptableLeader(img, -1, -1)))
	b.to, b.election = to, electionOnline
	ch, how := b.build()
	if ch == nil {
		return nil, nil, nil
	}
	reason := fmt.Sprintf("partition reassignment to %s", replicaList(target))
	if merged, err := p.Merge(ch); err == nil && to.inProgress() && !reassigning(merged) {
		reason += ", complete at once: the ISR allows it"
	}
	return ch, changeEvents(t.Name(), ch, p, how, reason), nil
}

// replicaList spells replicas as kafka-reassign-partitions does: 1,2,3.
func replicaList(rs []int32) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.Itoa(int(r))
	}
	return strings.Join(s, ",")
}

// checkReassignmentTarget is Kafka's validateManualPartitionAssignment
// for a reassignment: not empty, and each broker registered, with a log
// directory not cordoned, and named once; checked in id order.
func checkReassignmentTarget(img *image.MetadataImage, target []int32) *apiError {
	if len(target) == 0 {
		return refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	sorted := slices.Sorted(slices.Values(target))
	for i, id := range sorted {
		b := img.Cluster().Broker(id)
		if b == nil {
			return refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if !hasUncordonedDir(b) {
			return refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but all its log directories are cordoned.", id)
		}
		if i > 0 && sorted[i-1] == id {
			return refuse(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", id)
		}
	}
	return nil
}

// hasUncordonedDir is Kafka's BrokerRegistration.hasUncordonedDirs.
func hasUncordonedDir(b *image.BrokerRegistration) bool {
	if len(b.Directories) == 0 || b.CordonedDirectories == nil {
		return true
	}
	return slices.ContainsFunc(b.Directories, func(d record.Uuid) bool { return !slices.Contains(b.CordonedDirectories, d) })
}

// reassignmentSetSize is the partition's replication factor as Kafka's
// validatePartitionReplicationFactorUnchanged counts it: the replicas a
// reassignment in progress is going to, else the replicas.
func reassignmentSetSize(p *image.PartitionRegistration) int {
	if !reassigning(p) {
		return len(p.Replicas)
	}
	set := map[int32]bool{}
	for _, r := range p.Replicas {
		set[r] = true
	}
	for _, r := range p.AddingReplicas {
		set[r] = true
	}
	for _, r := range p.RemovingReplicas {
		delete(set, r)
	}
	return len(set)
}

// listPartitionReassignments is Kafka's listPartitionReassignments, what
// kafka-reassign-partitions --list and --verify read: from the committed
// metadata, every partition being reassigned (no topics named), or those
// of the partitions named; unknown topics and partitions not being
// reassigned are left out.
func (c *QuorumController) listPartitionReassignments(r *kmsg.ListPartitionReassignmentsRequest) outcome {
	resp := kmsg.NewPtrListPartitionReassignmentsResponse()
	img := c.st.committed
	add := func(t *image.TopicImage, ids []int32) {
		rt := kmsg.NewListPartitionReassignmentsResponseTopic()
		rt.Topic = t.Name()
		for _, id := range ids {
			p := t.Partition(id)
			if p == nil || !reassigning(p) {
				continue
			}
			rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			rp.Partition = id
			rp.Replicas = slices.Clone(p.Replicas)
			rp.AddingReplicas = slices.Clone(orNone(p.AddingReplicas))
			rp.RemovingReplicas = slices.Clone(orNone(p.RemovingReplicas))
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) > 0 {
			resp.Topics = append(resp.Topics, rt)
		}
	}
	if r.Topics == nil {
		for _, name := range img.Topics().Names() {
			t := img.Topics().TopicByName(name)
			add(t, t.PartitionIDs())
		}
	} else {
		for _, rt := range r.Topics {
			if t := img.Topics().TopicByName(rt.Topic); t != nil {
				add(t, rt.Partitions)
			}
		}
	}
	return outcome{resp: resp}
}

// AlterReassignmentsError is the answer to r that says code for all of
// it, at the top and for every partition (Kafka's getErrorResponse); a
// broker that forwards AlterPartitionReassignments answers with it when no
// controller answered.
func AlterReassignmentsError(r *kmsg.AlterPartitionAssignmentsRequest, code int16, msg *string) *kmsg.AlterPartitionAssignmentsResponse {
	resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
	resp.ErrorCode, resp.ErrorMessage = code, msg
	for _, t := range r.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// ListReassignmentsError is the answer to r that says code, naming the
// partitions it asked about (Kafka's getErrorResponse).
func ListReassignmentsError(r *kmsg.ListPartitionReassignmentsRequest, code int16, msg *string) *kmsg.ListPartitionReassignmentsResponse {
	resp := kmsg.NewPtrListPartitionReassignmentsResponse()
	resp.ErrorCode, resp.ErrorMessage = code, msg
	for _, t := range r.Topics {
		rt := kmsg.NewListPartitionReassignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, id := range t.Partitions {
			rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			rp.Partition = id
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
