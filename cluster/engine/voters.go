package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
)

// A dynamic quorum (kraft.version 1) grows and shrinks at run time, the
// way an operator does it with Kafka: a new controller starts as an
// observer of the quorum, then kafka-metadata-quorum add-controller sends
// AddRaftVoter to the active controller, which adds it once it has caught
// up; remove-controller sends RemoveRaftVoter. The engine sends them as
// that tool would, from outside the playground: the link faults do not
// touch it.

// toolID is the node id the engine's quorum tool speaks as, for the
// counters: no node has it.
const toolID = -2

// voterChangeRetry is the pause between two AddRaftVoter attempts while
// the leader answers that the new controller has not caught up yet.
const voterChangeRetry = 50 * time.Millisecond

// AddController implements Engine.
func (e *engine) AddController(ctx context.Context, id int32, vote bool) (int32, string, error) {
	e.joinMu.Lock()
	defer e.joinMu.Unlock()
	if err := e.dynamicQuorum("add controllers"); err != nil {
		return 0, "", err
	}
	var n *engineNode
	if id == 0 {
		var err error
		if id, n, err = e.startController(ctx); err != nil {
			return id, "", err
		}
	} else {
		var err error
		if n, err = e.observerController(id); err != nil {
			return 0, "", err
		}
	}
	meta, err := server.ReadMetaProperties(server.NodeDir(e.dir, id))
	if err != nil {
		return id, "", err
	}
	ep, ok := quorum.EndpointOf(n.srv.Addr())
	if !ok {
		return id, "", fmt.Errorf("controller %d listens at %q", id, n.srv.Addr())
	}
	props, err := server.WriteControllerProperties(server.NodeDir(e.dir, id), id, n.srv.Addr())
	if err != nil {
		return id, "", err
	}
	if !vote {
		return id, props, nil
	}
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.ClusterID = &e.clusterID
	req.TimeoutMillis = 30000
	req.VoterID, req.VoterDirectoryID = id, meta.DirectoryID
	l := kmsg.NewAddRaftVoterRequestListener()
	l.Name, l.Host, l.Port = ep.Name, ep.Host, ep.Port
	req.Listeners = []kmsg.AddRaftVoterRequestListener{l}
	req.AckWhenCommitted = true
	return id, props, e.changeVoters(ctx, req, fmt.Sprintf("add controller %d", id))
}

// dynamicQuorum refuses a voter change (what) unless the quorum is dynamic
// and replicates by pull.
func (e *engine) dynamicQuorum(what string) error {
	switch {
	case e.zkMode():
		return cluster.Errorf(cluster.ErrBadAction, "zk mode has no metadata quorum to %s to", what)
	case e.kraftVersion() < int64(raft.KRaftVersion1):
		return cluster.Errorf(cluster.ErrBadAction, "the quorum is static (kraft.version 0): upgrade it (kafka-features --bootstrap-controller ... upgrade --feature kraft.version=1) or start the playground without --set kraft.version=0 to %s", what)
	case e.cfg.Settings.Replication == raft.Push:
		return cluster.Errorf(cluster.ErrBadAction, "a push quorum (%s=push) keeps its voters: voter changes (KIP-853) are built for Kafka's pull replication; start the playground without --quorum push to %s", view.ReplicationKey, what)
	}
	return nil
}

// startController starts a new controller, the next free id, as an
// observer of the quorum.
func (e *engine) startController(ctx context.Context) (int32, *engineNode, error) {
	id := int32(1)
	for _, n := range e.all() {
		if n.kind == view.KindController && n.id >= id {
			id = n.id + 1
		}
	}
	if id > cluster.MaxControllers {
		return 0, nil, cluster.Errorf(cluster.ErrBadAction, "controller ids end at %d", cluster.MaxControllers)
	}
	cfg, err := e.joiningSettings().JoiningControllerConfig(id, e.cfg.ControllerIDs(), e.clusterID, e.dir)
	if err != nil {
		return 0, nil, err
	}
	n, err := e.newNodeFrom(id, cfg)
	if err != nil {
		return 0, nil, err
	}
	e.addMember(n)
	if err := e.group.Start(ctx, n.srv); err != nil {
		return id, nil, fmt.Errorf("start controller %d: %w", id, err)
	}
	return id, n, nil
}

// observerController is running controller id, if it is no voter: its
// id is not in the voter set, or its folder's directory id is not the
// one there (it was wiped).
func (e *engine) observerController(id int32) (*engineNode, error) {
	n, err := e.node(id)
	if err != nil {
		return nil, err
	}
	if n.kind != view.KindController {
		return nil, cluster.Errorf(cluster.ErrBadAction, "node %d is not a controller", id)
	}
	if !n.srv.Running() || n.q == nil {
		return nil, cluster.Errorf(cluster.ErrNodeState, "controller %d is not running: start it, let it catch up as an observer, then add it", id)
	}
	st := n.q.Status()
	if st.Voter {
		return nil, cluster.Errorf(cluster.ErrBadAction, "controller %d is a voter already", id)
	}
	// The leader's voter set decides: the observer may not have fetched
	// the removal of its old entry yet.
	voters := st.Voters
	if l := e.quorumLeader(); l != nil && l.q != nil {
		voters = l.q.Status().Voters
	}
	if slices.Contains(voters, id) {
		return nil, cluster.Errorf(cluster.ErrBadAction, "the voter set still names controller %d with its old directory id: remove that voter first (kraftlab controllers remove %d)", id, id)
	}
	return n, nil
}

// RemoveController implements Engine.
func (e *engine) RemoveController(ctx context.Context, id int32) error {
	e.joinMu.Lock()
	defer e.joinMu.Unlock()
	if err := e.dynamicQuorum("remove controllers"); err != nil {
		return err
	}
	n, err := e.node(id)
	if err != nil {
		return err
	}
	if n.kind != view.KindController {
		return cluster.Errorf(cluster.ErrBadAction, "node %d is not a controller", id)
	}
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.ClusterID = &e.clusterID
	req.VoterID = id
	// The voter set's directory id, as an operator reads it from
	// kafka-metadata-quorum describe --status: a controller whose folder
	// was wiped has another one now.
	dir, err := e.voterDirectory(ctx, id)
	if err != nil {
		return err
	}
	req.VoterDirectoryID = dir
	return e.changeVoters(ctx, req, fmt.Sprintf("remove controller %d", id))
}

// voterDirectory is the directory id the leader's voter set names for
// voter id, from its DescribeQuorum (v2) answer.
func (e *engine) voterDirectory(ctx context.Context, id int32) ([16]byte, error) {
	l := e.quorumLeader()
	if l == nil {
		return [16]byte{}, cluster.Errorf(cluster.ErrNodeState, "no leader to ask for the voter set")
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.SetVersion(2)
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = raft.MetadataTopic
	p := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{p}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{t}
	resp, err := e.send(ctx, l, req)
	if err != nil {
		return [16]byte{}, fmt.Errorf("describe the quorum: %w", err)
	}
	r, ok := resp.(*kmsg.DescribeQuorumResponse)
	if !ok || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return [16]byte{}, fmt.Errorf("describe the quorum: unexpected answer %T", resp)
	}
	part := r.Topics[0].Partitions[0]
	if part.ErrorCode != 0 {
		return [16]byte{}, fmt.Errorf("describe the quorum: %v", kerr.ErrorForCode(part.ErrorCode))
	}
	for _, v := range part.CurrentVoters {
		if v.ReplicaID == id {
			return v.ReplicaDirectoryID, nil
		}
	}
	return [16]byte{}, cluster.Errorf(cluster.ErrBadAction, "controller %d is not a voter", id)
}

// changeVoters sends req to the quorum's leader until it is answered with
// no error, or with one that waiting does not cure, or ctx ends. The
// leader answers REQUEST_TIMED_OUT while the new controller catches up or
// an earlier change commits, and NOT_LEADER_OR_FOLLOWER across elections.
func (e *engine) changeVoters(ctx context.Context, req kmsg.Request, what string) error {
	return e.askLeader(ctx, req, what, time.Time{}, func(code int16, msg string) (error, bool) {
		switch code {
		case 0:
			return nil, true
		case kerr.RequestTimedOut.Code, kerr.NotLeaderForPartition.Code:
			return fmt.Errorf("%v: %s", kerr.ErrorForCode(code), msg), false
		}
		return cluster.Errorf(cluster.ErrRefused, "%s: %v: %s", what, kerr.ErrorForCode(code), msg), true
	})
}

// askLeader sends req to the quorum's leader, every voterChangeRetry,
// until judge takes its answer as final (returning judge's error, nil for
// success), ctx ends, or a non-zero deadline passes (returning the last
// reason to wait). judge hears the answer's error code and message.
func (e *engine) askLeader(ctx context.Context, req kmsg.Request, what string, deadline time.Time, judge func(code int16, msg string) (err error, final bool)) error {
	var last error = cluster.Errorf(cluster.ErrNodeState, "no leader")
	for {
		if l := e.quorumLeader(); l != nil {
			code, msg, err := e.sendTool(ctx, l, req)
			if err != nil {
				last = err
			} else {
				var final bool
				if last, final = judge(code, msg); final {
					return last
				}
			}
		}
		if !deadline.IsZero() && !e.clock.Now().Before(deadline) {
			return last
		}
		t := e.clock.NewTimer(voterChangeRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last: %v)", what, ctx.Err(), last)
		case <-t.C:
		}
	}
}

// quorumLeader is the running controller that leads and has committed in
// its epoch, nil if none does.
func (e *engine) quorumLeader() *engineNode {
	for _, n := range e.all() {
		if n.kind != view.KindController || n.q == nil || !n.srv.Running() {
			continue
		}
		if st := n.q.Status(); st.Role == raft.Leader && st.HighWatermark >= 0 {
			return n
		}
	}
	return nil
}

// sendTool sends a voter change to n and returns its error code and
// message.
func (e *engine) sendTool(ctx context.Context, n *engineNode, req kmsg.Request) (int16, string, error) {
	resp, err := e.send(ctx, n, req)
	if err != nil {
		return 0, "", err
	}
	var code int16
	var msg *string
	switch r := resp.(type) {
	case *kmsg.AddRaftVoterResponse:
		code, msg = r.ErrorCode, r.ErrorMessage
	case *kmsg.RemoveRaftVoterResponse:
		code, msg = r.ErrorCode, r.ErrorMessage
	case *kmsg.UpdateFeaturesResponse:
		code, msg = r.ErrorCode, r.ErrorMessage
	}
	if msg == nil {
		return code, "", nil
	}
	return code, *msg, nil
}

// send sends req to n as kafka-metadata-quorum would.
func (e *engine) send(ctx context.Context, n *engineNode, req kmsg.Request) (kmsg.Response, error) {
	c, err := wire.NewClient(wire.ClientConfig{From: toolID, To: n.id, Addr: n.srv.Addr(), ClientID: "kafka-metadata-quorum"})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 35*time.Second)
	defer cancel()
	return c.Do(ctx, req)
}
