package partition

import "time"

// replicaState is what the leader knows of one follower (Kafka's
// ReplicaState): what its fetches said and when.
type replicaState struct {
	// leo is the follower's log end offset: the fetch offset of its last
	// fetch, or -1 before its first fetch to this leader.
	leo int64
	// lastFetchLeaderLEO is the leader's log end offset when the last
	// fetch arrived (Kafka's lastFetchLeaderLogEndOffset).
	lastFetchLeaderLEO int64
	lastFetch          time.Time
	// lastCaughtUp is the last time the follower was known to hold
	// everything the leader held; zero means never since it was reset.
	lastCaughtUp time.Time
	// fetchedSinceISRCheck: the follower fetched since ISRChange last
	// looked at it for an expansion. Kafka considers a follower for the
	// ISR only as its fetch arrives (Partition.updateFollowerFetchState
	// calls maybeExpandIsr), so one that stopped fetching is never added
	// back, even when the high watermark, held under min.insync.replicas,
	// is no further than what it last fetched.
	fetchedSinceISRCheck bool
	// brokerEpoch is the broker epoch the follower's last fetch named
	// (ReplicaState.ReplicaEpoch, KIP-903), -1 if none did or it did not
	// say; AlterPartition carries it for the controller to check.
	brokerEpoch int64
}

// caughtUp is Kafka's ReplicaState.isCaughtUp: the follower holds the
// leader's log end offset, or did so within maxLag.
func (r *replicaState) caughtUp(leaderLEO int64, now time.Time, maxLag time.Duration) bool {
	return r.leo == leaderLEO || (!r.lastCaughtUp.IsZero() && now.Sub(r.lastCaughtUp) <= maxLag)
}

// updateFetch records a fetch from the follower at fetchOffset, arriving
// while the leader's log ended at leaderLEO (Kafka's
// updateFetchStateOrThrow). A fetch for everything the leader holds makes
// the follower caught up now; one for everything the leader held at the
// previous fetch makes it caught up as of that fetch.
func (r *replicaState) updateFetch(fetchOffset, leaderLEO, brokerEpoch int64, now time.Time) {
	switch {
	case fetchOffset >= leaderLEO:
		r.lastCaughtUp = later(r.lastCaughtUp, now)
	case fetchOffset >= r.lastFetchLeaderLEO && r.lastFetchLeaderLEO >= 0:
		r.lastCaughtUp = later(r.lastCaughtUp, r.lastFetch)
	}
	r.leo = fetchOffset
	r.lastFetchLeaderLEO = max(leaderLEO, r.lastFetchLeaderLEO)
	r.lastFetch = now
	r.fetchedSinceISRCheck = true
	r.brokerEpoch = brokerEpoch
}

// reset is Kafka's resetReplicaState, run when this replica becomes leader
// or starts a new leader epoch: an ISR member counts as caught up now (so
// it is not dropped before it can fetch), any other replica not at all (so
// it does not hold the high watermark back). A new leader forgets what the
// follower's fetches said; a re-elected one keeps their times but, unlike
// Kafka, not their log end offsets. Between its two epochs another leader
// may have led one it never heard of, and a follower may have truncated to
// that leader's log and taken other records at the offsets it had
// acknowledged: counted toward the high watermark, its old log end would
// commit records an ISR member does not hold. Its first fetch in the new
// epoch, checked against the leader's epochs, tells the leader again.
func (r *replicaState) reset(now time.Time, leaderEpochStart int64, newLeader, inISR bool) {
	var at time.Time
	if inISR {
		at = now
	}
	r.lastCaughtUp = at
	r.leo = -1
	if newLeader {
		r.lastFetchLeaderLEO, r.lastFetch, r.fetchedSinceISRCheck, r.brokerEpoch = -1, time.Time{}, false, -1
		return
	}
	r.lastFetchLeaderLEO, r.lastFetch = leaderEpochStart, at
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
