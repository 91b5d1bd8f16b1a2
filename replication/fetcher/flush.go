package fetcher

import "fmt"

// FlushTarget is a replica an answer appended to, which must be flushed
// before the next fetch acknowledges what it holds, and what the fetch
// asked for it.
type FlushTarget struct {
	sent sentPartition
	// Replica is the replica to flush.
	Replica Replica
}

// FlushFailed gives up on the partition whose flush failed, as on one
// whose append failed (the log refuses what it cannot make durable),
// unless it was removed or re-added meanwhile.
func (m *Machine) FlushFailed(f FlushTarget, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.parts[f.sent.tp]; ok && st.replica == f.Replica && st.CurrentLeaderEpoch == f.sent.leaderEpoch {
		m.markFailedLocked(f.sent.tp, fmt.Errorf("flush %s: %w", f.sent.tp, err))
	}
}
