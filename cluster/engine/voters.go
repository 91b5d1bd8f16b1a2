package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
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
func (e *engine) AddController(ctx context.Context, vote bool) (int32, string, error) {
	e.joinMu.Lock()
	defer e.joinMu.Unlock()
	if e.zkMode() || e.cfg.Settings.KRaftVersion < int64(raft.KRaftVersion1) {
		return 0, "", cluster.Errorf(cluster.ErrBadAction, "the quorum is static (kraft.version 0): start the playground with --set kraft.version=1 to add controllers")
	}
	id := int32(1)
	for _, n := range e.all() {
		if n.kind == view.KindController && n.id >= id {
			id = n.id + 1
		}
	}
	if id > cluster.MaxControllers {
		return 0, "", cluster.Errorf(cluster.ErrBadAction, "controller ids end at %d", cluster.MaxControllers)
	}
	cfg, err := e.cfg.Settings.JoiningControllerConfig(id, e.cfg.ControllerIDs(), e.clusterID, e.dir)
	if err != nil {
		return 0, "", err
	}
	n, err := e.newNodeFrom(id, cfg)
	if err != nil {
		return 0, "", err
	}
	e.addMember(n)
	if err := e.group.Start(ctx, n.srv); err != nil {
		return id, "", fmt.Errorf("start controller %d: %w", id, err)
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

// RemoveController implements Engine.
func (e *engine) RemoveController(ctx context.Context, id int32) error {
	e.joinMu.Lock()
	defer e.joinMu.Unlock()
	if e.zkMode() || e.cfg.Settings.KRaftVersion < int64(raft.KRaftVersion1) {
		return cluster.Errorf(cluster.ErrBadAction, "the quorum is static (kraft.version 0): start the playground with --set kraft.version=1 to remove controllers")
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
	if meta, err := server.ReadMetaProperties(server.NodeDir(e.dir, id)); err == nil {
		req.VoterDirectoryID = meta.DirectoryID
	}
	return e.changeVoters(ctx, req, fmt.Sprintf("remove controller %d", id))
}

// changeVoters sends req to the quorum's leader until it is answered with
// no error, or with one that waiting does not cure, or ctx ends. The
// leader answers REQUEST_TIMED_OUT while the new controller catches up or
// an earlier change commits, and NOT_LEADER_OR_FOLLOWER across elections.
func (e *engine) changeVoters(ctx context.Context, req kmsg.Request, what string) error {
	var last error = cluster.Errorf(cluster.ErrNodeState, "no leader")
	for {
		if l := e.quorumLeader(); l != nil {
			code, msg, err := e.sendTool(ctx, l, req)
			switch {
			case err != nil:
				last = err
			case code == 0:
				return nil
			case code == kerr.RequestTimedOut.Code || code == kerr.NotLeaderForPartition.Code:
				last = fmt.Errorf("%v: %s", kerr.ErrorForCode(code), msg)
			default:
				return cluster.Errorf(cluster.ErrRefused, "%s: %v: %s", what, kerr.ErrorForCode(code), msg)
			}
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
	c, err := wire.NewClient(wire.ClientConfig{From: toolID, To: n.id, Addr: n.srv.Addr(), ClientID: "kafka-metadata-quorum"})
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 35*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, req)
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
	}
	if msg == nil {
		return code, "", nil
	}
	return code, *msg, nil
}
