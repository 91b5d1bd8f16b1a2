package raft

import (
	"errors"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/storage"
)

// pushOutbox sends what a push leader has to send (Outbox). It runs at
// most as often as the driver takes the outbox, not on every entry point,
// so records appended and answers heard in between go out together
// (etcd's one MsgApp per follower per Ready). The deadline is recomputed
// with the new requests' timers.
func (n *Node) pushOutbox() {
	if n.busy || n.role != Leader || n.cfg.Replication != Push || n.shuttingDown {
		return
	}
	ls := n.lead
	wake := earliest(ls.roleWake, ls.pushAll(n, n.now))
	if !wake.IsZero() && !wake.After(n.now) {
		wake = n.now.Add(time.Millisecond)
	}
	n.deadline = wake
}

// pushTimers is when pushAll next has something to do that no entry point
// will prompt: a heartbeat, a request timeout, the end of a backoff. Due
// ones are left to the coming Outbox.
func (ls *leaderState) pushTimers(n *Node, now time.Time) time.Time {
	var wake time.Time
	later := func(t time.Time) {
		if t.After(now) {
			wake = earliest(wake, t)
		}
	}
	for _, rs := range [][]*replicaState{ls.voters, ls.observers} {
		for _, r := range rs {
			p := r.push
			if r.id == n.id || p == nil {
				continue
			}
			if p.state != snapshotting {
				later(p.lastSend.Add(n.cfg.HeartbeatInterval))
			}
			if len(p.flights) > 0 {
				later(p.flights[0].sentAt.Add(n.cfg.RequestTimeout))
			}
			later(p.backoffUntil)
		}
	}
	return wake
}

// pushAll sends every other replica what it lacks and a heartbeat to those
// that heard nothing for HeartbeatInterval; it returns when to look again.
// A push leader's replicas are its voters and the observers that asked
// with ObserveQuorum.
func (ls *leaderState) pushAll(n *Node, now time.Time) time.Time {
	var wake time.Time
	for _, rs := range [][]*replicaState{ls.voters, ls.observers} {
		for _, r := range rs {
			if r.id != n.id {
				wake = earliest(wake, ls.pushTo(n, r, now))
			}
		}
	}
	return wake
}

func (ls *leaderState) pushTo(n *Node, r *replicaState, now time.Time) time.Time {
	p := r.push
	if p.expire(now.Add(-n.cfg.RequestTimeout)) {
		// Records lost on the way: look for the match again.
		r.reprobe()
	}
	if now.Before(p.backoffUntil) {
		return p.backoffUntil
	}
	switch p.state {
	case snapshotting:
		if len(p.flights) == 0 {
			n.sendSnapshotChunk(r, now)
		}
	case probing:
		if p.windowed == 0 {
			n.sendAppend(r, now, true)
		}
	case replicating:
		for p.state == replicating && p.windowed < n.cfg.MaxInflight && p.next < n.log.LogEndOffset() {
			if !n.sendAppend(r, now, true) {
				break
			}
		}
		if p.commitDue && p.state == replicating && p.windowed < n.cfg.MaxInflight {
			// The high watermark moved and no records carry it: tell the
			// replica at once (etcd's bcastAppend on commit).
			n.sendAppend(r, now, false)
		}
	}
	var wake time.Time
	if p.state != snapshotting {
		// A snapshot's chunks are its heartbeats.
		if !now.Before(p.lastSend.Add(n.cfg.HeartbeatInterval)) {
			n.sendAppend(r, now, false)
		}
		wake = p.lastSend.Add(n.cfg.HeartbeatInterval)
	}
	if len(p.flights) > 0 {
		wake = earliest(wake, p.flights[0].sentAt.Add(n.cfg.RequestTimeout))
	}
	if now.Before(p.backoffUntil) {
		wake = earliest(wake, p.backoffUntil)
	}
	return wake
}

// reprobe restarts the search for the match from the known match offset,
// or from where it was while none is known.
func (r *replicaState) reprobe() {
	next := r.push.next
	if r.endOffset >= 0 {
		next = r.endOffset
	}
	r.push.becomeProbe(next)
}

// sendAppend sends an AppendEntries from the replica's next offset. With
// records set it carries the records there (up to AppendMaxBytes) and
// counts against the window: a probe, or a stream step that moves next on;
// without, it is empty (a heartbeat, or news of the high watermark). A
// replica whose next record is gone into the snapshot gets the snapshot
// instead. It reports whether a request carrying records went out.
func (n *Node) sendAppend(r *replicaState, now time.Time, records bool) bool {
	p := r.push
	base := p.next
	if base < n.log.LogStartOffset() {
		n.startSnapshotSend(r, now)
		return false
	}
	var data []byte
	end, lastEpoch := base, int32(-1)
	if records && base < n.log.LogEndOffset() {
		var err error
		if data, err = n.log.Read(base, n.appendMaxBytes()); err != nil {
			n.logger.Error("read the log to push", "replica", r.id, "offset", base, "err", err)
			p.backoffUntil = now.Add(n.cfg.RetryBackoff)
			return false
		}
		first := int64(-1)
		err = forBatches(data, func(b, last int64, epoch int32) {
			if first < 0 {
				first = b
			}
			end, lastEpoch = last+1, epoch
		})
		if err != nil || first < 0 || first > base {
			n.logger.Error("unreadable batches in the log", "replica", r.id, "offset", base, "err", err)
			p.backoffUntil = now.Add(n.cfg.RetryBackoff)
			return false
		}
		base = first
	}
	prev, ok := p.prevEpoch, base == p.prevAt
	if !ok {
		prev, ok = n.epochBefore(base)
	}
	if !ok {
		n.startSnapshotSend(r, now)
		return false
	}
	req := &pushrpc.AppendEntriesRequest{
		ClusterID:     &n.cfg.ClusterID,
		LeaderID:      n.id,
		LeaderEpoch:   n.epoch,
		BaseOffset:    base,
		PrevEpoch:     prev,
		HighWatermark: n.lead.hwm,
		Records:       data,
	}
	n.nextID++
	p.send(flight{id: n.nextID, base: base, end: end, leo: n.log.LogEndOffset(), sentAt: now, window: records})
	p.lastSend, p.commitDue = now, false
	if len(data) > 0 {
		p.prevAt, p.prevEpoch = end, lastEpoch
		if p.state == replicating {
			p.next = end
		}
	}
	n.outbox = append(n.outbox, Message{From: n.id, To: r.id, ID: n.nextID, Request: req})
	return len(data) > 0
}

// maxBatchBytes bounds a batch the leader writes: under push a batch
// must fit one AppendEntries, which a replica's listener takes only up to
// its frame limit (a push reads at least one whole batch, however big);
// under pull a Fetch's answer carries it, up to FetchMaxBytes.
func (n *Node) maxBatchBytes() int {
	if n.cfg.Replication == Push {
		return n.appendMaxBytes()
	}
	return int(n.cfg.FetchMaxBytes)
}

// appendMaxBytes is the most record bytes one AppendEntries carries.
func (n *Node) appendMaxBytes() int {
	if m := n.cfg.AppendMaxBytes; m > 0 && m < n.cfg.FetchMaxBytes {
		return int(m)
	}
	return int(n.cfg.FetchMaxBytes)
}

// forBatches calls fn with the base, last offset and epoch of each whole
// batch of data.
func forBatches(data []byte, fn func(base, last int64, epoch int32)) error {
	for len(data) > 0 {
		base, last, epoch, size, err := storage.PeekBatch(data)
		if err != nil {
			return err
		}
		fn(base, last, epoch)
		data = data[size:]
	}
	return nil
}

// epochBefore is the epoch of the record before off: 0 at offset 0, the
// snapshot's at the log start; false when the log no longer holds it (or
// never did).
func (n *Node) epochBefore(off int64) (int32, bool) {
	start, leo := n.log.LogStartOffset(), n.log.LogEndOffset()
	switch {
	case off == 0:
		return 0, true
	case off < start || off > leo:
		return 0, false
	case off == start:
		s, ok := n.snapshotAtStart()
		return s.Epoch, ok
	case off == leo:
		return n.log.LastEpoch(), true
	}
	data, err := n.log.Read(off-1, 1)
	if err != nil {
		n.logger.Error("read the log for an epoch", "offset", off-1, "err", err)
		return 0, false
	}
	_, _, epoch, _, err := storage.PeekBatch(data)
	return epoch, err == nil
}

// commitMoved marks every replica for news of the high watermark.
func (ls *leaderState) commitMoved() {
	for _, rs := range [][]*replicaState{ls.voters, ls.observers} {
		for _, r := range rs {
			if r.push != nil {
				r.push.commitDue = true
			}
		}
	}
}

// heardFrom credits an answer of this epoch: the replica is alive and
// follows this leader (check-quorum, the observer session).
func (ls *leaderState) heardFrom(n *Node, r *replicaState, now time.Time) {
	r.lastFetch = maxTime(r.lastFetch, now)
	r.acked = true
	if r.voter {
		ls.followingVoter(n, r.id, now)
	}
}

// find returns the leader's state of a replica it knows, nil otherwise.
func (ls *leaderState) find(id int32) *replicaState {
	for _, rs := range [][]*replicaState{ls.voters, ls.observers} {
		for _, r := range rs {
			if r.id == id {
				return r
			}
		}
	}
	return nil
}

// isPushAnswer reports whether m answers (or fails) a request the push
// leader sent: those skip the one-request connections of the other RPCs.
func (n *Node) isPushAnswer(m Message) bool {
	if n.role != Leader || n.cfg.Replication != Push || m.ID <= n.lead.firstID {
		return false
	}
	switch m.Response.(type) {
	case *pushrpc.AppendEntriesResponse, *pushrpc.InstallSnapshotResponse:
		return true
	}
	if r := n.lead.find(m.From); m.Err != nil && r != nil && r.push != nil {
		for _, f := range r.push.flights {
			if f.id == m.ID {
				return true
			}
		}
	}
	return false
}

// handlePushAnswer handles the answer to an AppendEntries or
// InstallSnapshot. One to a request no longer in flight (timed out, or
// sent before the replica was probed afresh) still counts when it
// accepts records: a replica's match only grows within an epoch.
func (n *Node) handlePushAnswer(now time.Time, m Message) error {
	r := n.lead.find(m.From)
	if r == nil || r.push == nil {
		return nil
	}
	p := r.push
	f, current := p.take(m.ID)
	if m.Err != nil {
		if current {
			n.logger.Debug("push failed", "to", m.From, "err", m.Err)
			p.backoffUntil = now.Add(n.cfg.RetryBackoff)
			r.reprobe()
		}
		return nil
	}
	var code int16
	var leader, epoch int32
	switch resp := m.Response.(type) {
	case *pushrpc.AppendEntriesResponse:
		code, leader, epoch = resp.ErrorCode, resp.LeaderID, resp.LeaderEpoch
	case *pushrpc.InstallSnapshotResponse:
		code, leader, epoch = resp.ErrorCode, resp.LeaderID, resp.LeaderEpoch
	}
	if handled, _, err := n.handleCommonResponse(now, code, leader, epoch); handled || err != nil || code != errNone {
		if n.role == Leader && current {
			n.logger.Warn("push refused", "to", m.From, "error", ErrorName(code))
			p.backoffUntil = now.Add(n.cfg.RetryBackoff)
		}
		return err
	}
	n.lead.heardFrom(n, r, now)
	switch resp := m.Response.(type) {
	case *pushrpc.AppendEntriesResponse:
		n.appendAnswered(now, r, f, current, resp)
	case *pushrpc.InstallSnapshotResponse:
		if current {
			n.snapshotChunkAnswered(now, r, resp)
		}
	}
	return nil
}

// appendAnswered applies an AppendEntries answer of this epoch (etcd's
// MsgAppResp in stepLeader).
func (n *Node) appendAnswered(now time.Time, r *replicaState, f flight, current bool, resp *pushrpc.AppendEntriesResponse) {
	p := r.push
	leo := n.log.LogEndOffset()
	if !resp.Success {
		if !current || p.state == snapshotting {
			return
		}
		if resp.LogEndOffset < r.endOffset {
			// It lost records it acknowledged (its folder was wiped): how
			// far it matches is unknown again, as a pull leader learns
			// from such a replica's next Fetch.
			n.logger.Warn("replica lost records it acknowledged", "replica", r.id, "match", r.endOffset, "logEnd", resp.LogEndOffset)
			r.endOffset = -1
		}
		if f.base <= r.endOffset {
			// The logs match past where it refused: nothing to probe. Wait
			// a backoff, so that a peer refusing what matched cannot make
			// the leader spin.
			p.backoffUntil = now.Add(n.cfg.RetryBackoff)
			return
		}
		next := n.probeFrom(resp.DivergingEpoch, f.base)
		n.logger.Debug("push refused: probing", "replica", r.id, "at", f.base, "next", next, "hint", resp.DivergingEpoch)
		p.becomeProbe(max(next, r.endOffset))
		return
	}
	match := resp.MatchOffset
	if match < 0 || match > leo || (current && match > f.end) {
		n.logger.Warn("push answer claims a match past what was sent", "replica", r.id, "match", match, "logEnd", leo)
		return
	}
	if match > r.endOffset {
		r.endOffset = match
	}
	if match >= leo {
		r.lastCaughtUp = maxTime(r.lastCaughtUp, now)
	} else if current && match >= f.leo {
		r.lastCaughtUp = maxTime(r.lastCaughtUp, f.sentAt)
	}
	p.acked(r.endOffset)
	switch p.state {
	case probing:
		if current || match >= p.next {
			p.becomeReplicate(r.endOffset)
		}
	case replicating:
		p.next = max(p.next, r.endOffset)
	case snapshotting:
		if r.endOffset >= p.snapshot.EndOffset {
			p.becomeProbe(r.endOffset)
		}
	}
	if r.voter {
		n.lead.maybeUpdateHighWatermark(n)
	}
}

// probeFrom is where to probe next after a refusal at base with the
// replica's hint (etcd's findConflictByTerm on the leader): the largest
// offset at most the hint's where the leader's record before it has an
// epoch at most the hint's. A probe there succeeds or refuses with an
// older epoch, so probing takes one round trip per epoch, not per record.
func (n *Node) probeFrom(hint pushrpc.EpochEndOffset, base int64) int64 {
	if hint.Epoch < 0 || hint.EndOffset < 0 || hint.EndOffset > base {
		return 0
	}
	_, end := n.endOffsetForEpoch(hint.Epoch)
	next := min(hint.EndOffset, end)
	if next >= base {
		// An honest replica never points at the offset it refused.
		next = base - 1
	}
	return max(next, 0)
}

// startSnapshotSend switches a replica whose next record is gone from the
// log to the leader's latest snapshot.
func (n *Node) startSnapshotSend(r *replicaState, now time.Time) {
	s, ok := n.log.LatestSnapshot()
	if !ok {
		n.logger.Error("no snapshot for a replica behind the log start", "replica", r.id, "next", r.push.next, "logStart", n.log.LogStartOffset())
		r.push.backoffUntil = now.Add(n.cfg.RetryBackoff)
		return
	}
	n.logger.Info("pushing snapshot", "replica", r.id, "id", s)
	r.push.becomeSnapshot(s)
	n.sendSnapshotChunk(r, now)
}

// sendSnapshotChunk sends the next chunk of the snapshot being pushed,
// starting over with the latest one when the leader replaced it.
func (n *Node) sendSnapshotChunk(r *replicaState, now time.Time) {
	p := r.push
	data, size, err := n.log.ReadSnapshot(p.snapshot, p.position, n.appendMaxBytes())
	if errors.Is(err, ErrSnapshotNotFound) {
		if s, ok := n.log.LatestSnapshot(); ok && s != p.snapshot {
			p.becomeSnapshot(s)
			data, size, err = n.log.ReadSnapshot(p.snapshot, 0, n.appendMaxBytes())
		}
	}
	if err != nil {
		n.logger.Error("read snapshot to push", "replica", r.id, "id", p.snapshot, "err", err)
		p.backoffUntil = now.Add(n.cfg.RetryBackoff)
		return
	}
	p.size = size
	req := &pushrpc.InstallSnapshotRequest{
		ClusterID:   &n.cfg.ClusterID,
		LeaderID:    n.id,
		LeaderEpoch: n.epoch,
		SnapshotID:  pushrpc.EpochEndOffset{Epoch: p.snapshot.Epoch, EndOffset: p.snapshot.EndOffset},
		Size:        size,
		Position:    p.position,
		Bytes:       data,
	}
	n.nextID++
	p.send(flight{id: n.nextID, base: p.position, end: p.position + int64(len(data)), leo: n.log.LogEndOffset(), sentAt: now, window: true})
	p.lastSend = now
	n.outbox = append(n.outbox, Message{From: n.id, To: r.id, ID: n.nextID, Request: req})
}

// snapshotChunkAnswered moves the snapshot push on: the replica says how
// much it holds; all of it means it installed the snapshot, and its log
// now matches the leader's up to the snapshot's end.
func (n *Node) snapshotChunkAnswered(now time.Time, r *replicaState, resp *pushrpc.InstallSnapshotResponse) {
	p := r.push
	if p.state != snapshotting {
		return
	}
	switch {
	case resp.Position == p.size:
		n.logger.Info("snapshot pushed", "replica", r.id, "id", p.snapshot)
		r.endOffset = max(r.endOffset, p.snapshot.EndOffset)
		p.prevAt, p.prevEpoch = p.snapshot.EndOffset, p.snapshot.Epoch
		p.becomeProbe(p.snapshot.EndOffset)
		if r.voter {
			n.lead.maybeUpdateHighWatermark(n)
		}
	case resp.Position < 0 || resp.Position > p.size:
		n.logger.Warn("snapshot answer outside the snapshot; starting over", "replica", r.id, "position", resp.Position, "size", p.size)
		p.position = 0
	default:
		p.position = resp.Position
	}
}
