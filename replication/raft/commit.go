package raft

import (
	"errors"
	"fmt"

	"github.com/kraftlab/kraftlab/storage"
)

// updateListener hands the listener what became committed, loading the
// snapshot first when the next offset it needs is gone from the log, and
// tells it of leader changes (KafkaRaftClient.updateListenersProgress and
// maybeFireLeaderChange).
func (n *Node) updateListener() error {
	hw := n.highWatermark()
	if hw > n.listenerNext {
		if err := n.maybeLoadSnapshot(hw); err != nil {
			return err
		}
		if err := n.commitUpTo(hw); err != nil {
			return err
		}
	}
	n.maybeFireLeaderChange()
	return nil
}

func (n *Node) maybeLoadSnapshot(hw int64) error {
	s, ok := n.log.LatestSnapshot()
	if !ok || n.listenerNext >= hw || (n.listenerNext >= n.log.LogStartOffset() && n.listenerNext != 0) {
		return nil
	}
	snap, err := n.readSnapshot(s)
	if err != nil {
		return err
	}
	n.logger.Info("loading snapshot into the listener", "id", s)
	n.listenerNext = s.EndOffset
	n.emit(Event{Kind: EventSnapshotLoaded, Snapshot: s})
	n.listener.HandleLoadSnapshot(snap)
	return nil
}

func (n *Node) commitUpTo(hw int64) error {
	for n.listenerNext < hw {
		data, err := n.log.Read(n.listenerNext, int(n.cfg.FetchMaxBytes))
		if err != nil {
			return fmt.Errorf("read committed records at %d: %w", n.listenerNext, err)
		}
		batches := n.committed[:0]
		next := n.listenerNext
		err = storage.Batches(data, func(_ int, b *storage.Batch) error {
			if b.LastOffset() >= hw || b.FirstOffset != next {
				return errStop
			}
			batches = append(batches, *b)
			next = b.NextOffset()
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			return fmt.Errorf("decode committed batches at %d: %w", n.listenerNext, err)
		}
		if len(batches) == 0 {
			return nil
		}
		n.listenerNext = next
		n.listener.HandleCommit(batches)
		clear(batches) // the log memory they alias is not kept alive
		n.committed = batches[:0]
	}
	return nil
}

// errStop ends a walk over batches early.
var errStop = errors.New("stop")

// maybeFireLeaderChange tells the listener of a new epoch or a newly known
// leader. A new leader tells its own listener only once it has applied the
// epoch's first offset, so the state machine starts writing with the whole
// committed state.
func (n *Node) maybeFireLeaderChange() {
	cur := LeaderAndEpoch{LeaderID: n.leader, Epoch: n.epoch}
	if cur == n.notified {
		return
	}
	if cur.Epoch <= n.notified.Epoch && (cur.LeaderID < 0 || n.notified.LeaderID >= 0) {
		return
	}
	if cur.LeaderID == n.id && (n.role != Leader || n.listenerNext <= n.lead.epochStartOffset) {
		// Only a leader that has applied its epoch's start hears it leads;
		// a resigned one is not told it leads.
		return
	}
	n.notified = cur
	n.listener.HandleLeaderChange(cur)
}
