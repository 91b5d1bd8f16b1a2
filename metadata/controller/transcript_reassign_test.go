package controller

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/transcript"
	"github.com/kraftlab/kraftlab/metadata/image"
)

// The reassignment requests of the controller transcripts.

func (s *txScript) reassign(c *transcript.Cmd) string {
	var words []string
	cancel, noRFChange := false, false
	for _, w := range c.Words() {
		switch w {
		case "cancel":
			cancel = true
		case "no-rf-change":
			noRFChange = true
		default:
			words = append(words, w)
		}
	}
	replicas, ok := c.IDs("replicas")
	if len(words) == 0 || ok == cancel {
		c.Fatalf("reassign TOPIC-P... replicas=(...)|cancel [no-rf-change]")
	}
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.Version = 1
	req.AllowReplicationFactorChange = !noRFChange
	for _, w := range words {
		_, topic, part := s.partitionArg(c, w)
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != topic {
			t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			t.Topic = topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		p.Partition = part
		if !cancel {
			p.Replicas = replicas
		}
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	resp := s.send(c, req).(*kmsg.AlterPartitionAssignmentsResponse)
	out := s.take()
	if resp.ErrorCode != 0 {
		out.Addf("AlterPartitionReassignments: error=%s", transcript.Code(resp.ErrorCode))
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			line := fmt.Sprintf("AlterPartitionReassignments %s-%d: error=%s", t.Topic, p.Partition, transcript.Code(p.ErrorCode))
			if p.ErrorMessage != nil {
				line += fmt.Sprintf(" message=%q", *p.ErrorMessage)
			}
			out.Addf("%s", line)
		}
	}
	return out.String()
}

func (s *txScript) listReassignments(c *transcript.Cmd) string {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	for _, w := range c.Words() {
		_, topic, part := s.partitionArg(c, w)
		if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != topic {
			t := kmsg.NewListPartitionReassignmentsRequestTopic()
			t.Topic = topic
			req.Topics = append(req.Topics, t)
		}
		t := &req.Topics[len(req.Topics)-1]
		t.Partitions = append(t.Partitions, part)
	}
	resp := s.send(c, req).(*kmsg.ListPartitionReassignmentsResponse)
	out := s.take()
	if resp.ErrorCode != 0 {
		out.Addf("ListPartitionReassignments: error=%s", transcript.Code(resp.ErrorCode))
	}
	if len(resp.Topics) == 0 {
		out.Addf("ListPartitionReassignments: none")
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out.Addf("ListPartitionReassignments %s-%d: replicas=%s adding=%s removing=%s", t.Topic, p.Partition,
				transcript.IDs(p.Replicas), transcript.IDs(p.AddingReplicas), transcript.IDs(p.RemovingReplicas))
		}
	}
	return out.String()
}

// reassignmentState prints a partition's reassignment in progress, if any.
func reassignmentState(p *image.PartitionRegistration) string {
	if !reassigning(p) {
		return ""
	}
	return fmt.Sprintf(" adding=%s removing=%s", transcript.IDs(p.AddingReplicas), transcript.IDs(p.RemovingReplicas))
}
