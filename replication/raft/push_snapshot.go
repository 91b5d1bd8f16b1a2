package raft

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
)

// handleInstallSnapshotRequest takes one chunk of the snapshot the leader
// pushes (Raft's InstallSnapshot receiver) into the same snapshot writer a
// pull follower's FetchSnapshot fills, and installs the snapshot once
// whole. It answers with the position of the chunk it wants next: a chunk
// out of order is answered with where to resume.
func (n *Node) handleInstallSnapshotRequest(now time.Time, m Message, req *pushrpc.InstallSnapshotRequest) error {
	resp := &pushrpc.InstallSnapshotResponse{Position: -1}
	answer := func(code int16) {
		resp.ErrorCode, resp.LeaderID, resp.LeaderEpoch = code, n.leader, n.epoch
		n.reply(m, resp)
	}
	id := SnapshotID{EndOffset: req.SnapshotID.EndOffset, Epoch: req.SnapshotID.Epoch}
	switch {
	case !n.validClusterID(req.ClusterID):
		answer(errInconsistentClusterID)
		return nil
	case req.LeaderID < 0 || id.EndOffset <= 0 || id.Epoch < 0 || id.Epoch > req.LeaderEpoch ||
		req.Size <= 0 || req.Position < 0 || req.Position > req.Size || int64(len(req.Bytes)) > req.Size-req.Position:
		answer(errInvalidRequest)
		return nil
	}
	code, err := n.acceptPush(now, "InstallSnapshot", req.LeaderID, req.LeaderEpoch)
	if code != errNone {
		answer(code)
		return err
	}
	if s, ok := n.log.LatestSnapshot(); ok && s.EndOffset >= id.EndOffset && n.log.LogStartOffset() >= id.EndOffset {
		// It has this state or a later one already.
		resp.Position = req.Size
		answer(errNone)
		return nil
	}
	w := n.fetchingSnapshot
	if w == nil || w.ID() != id {
		if req.Position != 0 {
			resp.Position = 0
			answer(errNone)
			return nil
		}
		if w != nil {
			_ = w.Abort()
			n.fetchingSnapshot = nil
		}
		if w, err = n.log.CreateSnapshot(id); err != nil {
			return fmt.Errorf("start receiving snapshot %v: %w", id, err)
		}
		n.logger.Info("receiving snapshot", "id", id, "leader", n.leader)
		n.fetchingSnapshot = w
	}
	if req.Position != w.Size() {
		resp.Position = w.Size()
		answer(errNone)
		return nil
	}
	if err := w.Append(req.Bytes); err != nil {
		return fmt.Errorf("write snapshot %v: %w", id, err)
	}
	resp.Position = w.Size()
	if w.Size() == req.Size {
		keep := n.logHoldsEnd(id)
		if !keep && id.EndOffset < n.hwm {
			_ = w.Abort()
			n.fetchingSnapshot = nil
			answer(errInvalidRequest)
			return n.unsafe(true, "leader %d pushed snapshot %v, which ends below the high watermark %d and does not match the log", n.leader, id, n.hwm)
		}
		if err := w.Freeze(); err != nil {
			return fmt.Errorf("freeze snapshot %v: %w", id, err)
		}
		n.fetchingSnapshot = nil
		if err := n.installPushedSnapshot(id, keep); err != nil {
			return err
		}
	}
	answer(errNone)
	return nil
}

// logHoldsEnd reports whether the log holds a snapshot's last record past
// its start.
func (n *Node) logHoldsEnd(id SnapshotID) bool {
	e, ok := n.epochBefore(id.EndOffset)
	return ok && e == id.Epoch && id.EndOffset > n.log.LogStartOffset()
}

// installPushedSnapshot moves the log to a snapshot it received. A log
// that holds the snapshot's last record (keep) keeps what follows it (the
// Raft paper's rule; the leader may have been probing from further back);
// any other restarts at the snapshot's end, as a pull follower's does.
func (n *Node) installPushedSnapshot(id SnapshotID, keep bool) error {
	if keep {
		if err := n.log.AdvanceLogStart(id.EndOffset); err != nil {
			return fmt.Errorf("advance the log start to snapshot %v: %w", id, err)
		}
		if err := n.log.DeleteSnapshotsBefore(id); err != nil {
			return fmt.Errorf("delete snapshots before %v: %w", id, err)
		}
		n.history.truncateOld(id.EndOffset - 1)
		n.hwm = max(n.hwm, id.EndOffset)
		n.logger.Info("installed snapshot, log kept", "id", id)
		n.emit(Event{Kind: EventSnapshotFetched, Leader: n.leader, Snapshot: id})
		n.noteHighWatermark()
		return nil
	}
	return n.installSnapshot(id)
}
