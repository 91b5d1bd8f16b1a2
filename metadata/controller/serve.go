package controller

import (
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// APIs are the APIs the controller serves, at the versions Kafka 4.4's
// ControllerApis accepts (all within what kmsg encodes). The broker-facing
// ones are members only, as Kafka authorizes CLUSTER_ACTION for them; the
// topic APIs are open, so users' tools may create topics.
var APIs = []wire.APIRange{
	{Key: kmsg.BrokerRegistration.Int16(), MinVersion: 0, MaxVersion: 4, MembersOnly: true},
	{Key: kmsg.BrokerHeartbeat.Int16(), MinVersion: 0, MaxVersion: 2, MembersOnly: true},
	{Key: kmsg.AlterPartition.Int16(), MinVersion: 2, MaxVersion: 3, MembersOnly: true},
	{Key: kmsg.AllocateProducerIDs.Int16(), MinVersion: 0, MaxVersion: 0, MembersOnly: true},
	{Key: kmsg.AssignReplicasToDirs.Int16(), MinVersion: 0, MaxVersion: 0, MembersOnly: true},
	{Key: kmsg.CreateTopics.Int16(), MinVersion: 2, MaxVersion: 7},
	{Key: kmsg.DeleteTopics.Int16(), MinVersion: 1, MaxVersion: 6},
	{Key: kmsg.CreatePartitions.Int16(), MinVersion: 0, MaxVersion: 3},
	{Key: kmsg.IncrementalAlterConfigs.Int16(), MinVersion: 0, MaxVersion: 1},
	{Key: kmsg.ElectLeaders.Int16(), MinVersion: 0, MaxVersion: 2},
	{Key: kmsg.AlterPartitionAssignments.Int16(), MinVersion: 0, MaxVersion: 1},
	{Key: kmsg.ListPartitionReassignments.Int16(), MinVersion: 0, MaxVersion: 0},
}

// Register registers the controller's APIs on the node's mux.
func (c *QuorumController) Register(mux *wire.Mux) error {
	h := wire.HandlerFunc(c.serve)
	for _, api := range APIs {
		if err := mux.Handle(api, h); err != nil {
			return fmt.Errorf("controller %d: %w", c.cfg.NodeID, err)
		}
	}
	return nil
}

// outcome is a handler's decision: the records to write and the response
// to send once they commit.
type outcome struct {
	records []record.Record
	events  []Event
	resp    kmsg.Response
	// onCommit, if set, completes resp from the first offset of the
	// committed records.
	onCommit func(first int64)
}

// handle runs on the loop: a controller that is not active answers
// NOT_CONTROLLER so that the sender looks for the one that is.
func (c *QuorumController) handle(body kmsg.Request, respond func(kmsg.Response)) {
	if !c.st.active {
		respond(errorResponse(body, kerr.NotController.Code, ""))
		return
	}
	var o outcome
	switch b := body.(type) {
	case *kmsg.BrokerRegistrationRequest:
		o = c.registerBroker(b)
	case *kmsg.BrokerHeartbeatRequest:
		o = c.processBrokerHeartbeat(b)
	case *kmsg.AlterPartitionRequest:
		o = c.alterPartition(b)
	case *kmsg.AllocateProducerIDsRequest:
		o = c.allocateProducerIds(b)
	case *kmsg.AssignReplicasToDirsRequest:
		o = c.assignReplicasToDirs(b)
	case *kmsg.CreateTopicsRequest:
		o = c.createTopics(b)
	case *kmsg.DeleteTopicsRequest:
		o = c.deleteTopics(b)
	case *kmsg.CreatePartitionsRequest:
		o = c.createPartitions(b)
	case *kmsg.IncrementalAlterConfigsRequest:
		o = c.incrementalAlterConfigs(b)
	case *kmsg.ElectLeadersRequest:
		o = c.electLeaders(b)
	case *kmsg.AlterPartitionAssignmentsRequest:
		o = c.alterPartitionReassignments(b)
	case *kmsg.ListPartitionReassignmentsRequest:
		o = c.listPartitionReassignments(b)
	default:
		// The mux routes only the APIs registered here, decoded by kmsg
		// as their own types.
		c.log.Error("request of an API the controller does not serve", "api", kmsg.NameForKey(body.Key()))
		respond(nil)
		return
	}
	c.finish(body, respond, o)
}

// finish writes the outcome's records and answers once they commit, or at
// once (after what is pending) when it has none.
func (c *QuorumController) finish(body kmsg.Request, respond func(kmsg.Response), o outcome) {
	notController := func() { respond(errorResponse(body, kerr.NotController.Code, "")) }
	if len(o.records) == 0 {
		c.afterPending(func(ok bool) {
			if !ok {
				notController()
				return
			}
			respond(o.resp)
		})
		return
	}
	err := c.write(o.records, o.events, func(ok bool, first int64) {
		if !ok {
			notController()
			return
		}
		if o.onCommit != nil {
			o.onCommit(first)
		}
		respond(o.resp)
	})
	if err != nil {
		c.log.Error("cannot write a request's records", "api", kmsg.NameForKey(body.Key()), "err", err)
		respond(errorResponse(body, kerr.UnknownServerError.Code, err.Error()))
	}
}

// errorResponse answers every part of req with code.
func errorResponse(req kmsg.Request, code int16, msg string) kmsg.Response {
	var m *string
	if msg != "" {
		m = &msg
	}
	switch b := req.(type) {
	case *kmsg.BrokerRegistrationRequest:
		r := kmsg.NewPtrBrokerRegistrationResponse()
		r.ErrorCode, r.BrokerEpoch = code, -1
		return r
	case *kmsg.BrokerHeartbeatRequest:
		r := kmsg.NewPtrBrokerHeartbeatResponse()
		r.ErrorCode, r.IsFenced = code, true
		return r
	case *kmsg.AlterPartitionRequest:
		r := kmsg.NewPtrAlterPartitionResponse()
		r.ErrorCode = code
		return r
	case *kmsg.AllocateProducerIDsRequest:
		r := kmsg.NewPtrAllocateProducerIDsResponse()
		r.ErrorCode = code
		return r
	case *kmsg.CreateTopicsRequest:
		r := kmsg.NewPtrCreateTopicsResponse()
		for _, t := range b.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, code, m
			rt.NumPartitions, rt.ReplicationFactor = -1, -1
			r.Topics = append(r.Topics, rt)
		}
		return r
	case *kmsg.DeleteTopicsRequest:
		r := kmsg.NewPtrDeleteTopicsResponse()
		for _, name := range b.TopicNames {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = kmsg.StringPtr(name), code, m
			r.Topics = append(r.Topics, rt)
		}
		for _, t := range b.Topics {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = t.Topic, t.TopicID, code, m
			r.Topics = append(r.Topics, rt)
		}
		return r
	case *kmsg.CreatePartitionsRequest:
		r := kmsg.NewPtrCreatePartitionsResponse()
		for _, t := range b.Topics {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, code, m
			r.Topics = append(r.Topics, rt)
		}
		return r
	case *kmsg.IncrementalAlterConfigsRequest:
		return alterConfigsError(b, code, m)
	case *kmsg.ElectLeadersRequest:
		return ElectLeadersError(b, code, m)
	case *kmsg.AlterPartitionAssignmentsRequest:
		return AlterReassignmentsError(b, code, m)
	case *kmsg.ListPartitionReassignmentsRequest:
		return ListReassignmentsError(b, code, m)
	}
	return nil
}
