package benchkit

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stamps of one exchange: at the given microseconds after t0.
func stamps(t0 time.Time, key int16, conn uint32, corr, client, server int32, reqBytes, respBytes int, us [4]int) []wire.Stamp {
	at := func(i int) time.Time { return t0.Add(time.Duration(us[i]) * time.Microsecond) }
	return []wire.Stamp{
		{Kind: wire.ClientSent, Node: client, Key: key, Corr: corr, Conn: conn, Bytes: reqBytes, At: at(0)},
		{Kind: wire.ServerRead, Node: server, Key: key, Corr: corr, Conn: conn, Bytes: reqBytes, At: at(1)},
		{Kind: wire.ServerSent, Node: server, Key: key, Corr: corr, Conn: conn, Bytes: respBytes, At: at(2)},
		{Kind: wire.ClientRead, Node: client, Key: key, Corr: corr, Conn: conn, Bytes: respBytes, At: at(3)},
	}
}

// A pull commit: the record waits for follower 2's Fetch (it arrives 10
// µs after the proposal), leaves in its answer, and follower 2's next
// Fetch acknowledges it; follower 3 is slower and does not count. The
// legs add up to the proposal's 100 µs. A small answer (news of the high
// watermark) carries no record and is passed over, and so is an
// observer's earlier acknowledgement: observers do not count toward
// commit.
func TestLegsOfAPullCommit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	fetch := kmsg.Fetch.Int16()
	r := newLegRecorder(raft.Pull)
	r.start(t0.Add(-time.Second))
	var all []wire.Stamp
	all = append(all, stamps(t0, fetch, 1, 1, 2, 1, 80, 90, [4]int{-50, -40, 2, 8})...)    // 2: high watermark news
	all = append(all, stamps(t0, fetch, 1, 2, 2, 1, 80, 600, [4]int{5, 10, 30, 45})...)    // 2: the record
	all = append(all, stamps(t0, fetch, 1, 3, 2, 1, 80, 90, [4]int{55, 70, 200, 210})...)  // 2: the ack
	all = append(all, stamps(t0, fetch, 2, 1, 3, 1, 80, 600, [4]int{-30, -20, 31, 60})...) // 3: the record
	all = append(all, stamps(t0, fetch, 2, 2, 3, 1, 80, 90, [4]int{90, 96, 200, 210})...)  // 3: a later ack
	// An observer acknowledges first, but does not count toward commit.
	all = append(all, stamps(t0, fetch, 3, 1, 101, 1, 80, 600, [4]int{-30, -20, 3, 6})...)
	all = append(all, stamps(t0, fetch, 3, 2, 101, 1, 80, 90, [4]int{7, 8, 200, 210})...)
	for _, s := range all {
		r.stamp(s)
	}
	r.proposal(t0, t0.Add(100*time.Microsecond))
	l := r.split(1, []int32{2, 3}, 256)
	want := Legs{WaitFetch: 10 * time.Microsecond, LeaderSend: 20 * time.Microsecond, ToFollower: 15 * time.Microsecond,
		Follower: 10 * time.Microsecond, ToLeader: 15 * time.Microsecond, LeaderCommit: 30 * time.Microsecond, Split: 1, Commits: 1}
	if l != want {
		t.Errorf("legs %+v, want %+v", l, want)
	}
}

// A push commit: the leader's AppendEntries carries the record and its
// answer acknowledges it; an empty heartbeat before it is passed over.
func TestLegsOfAPushCommit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ae := pushrpc.AppendEntriesKey
	r := newLegRecorder(raft.Push)
	r.start(t0.Add(-time.Second))
	var all []wire.Stamp
	all = append(all, stamps(t0, ae, 1, 1, 1, 2, 90, 60, [4]int{1, 6, 8, 12})...)     // heartbeat
	all = append(all, stamps(t0, ae, 1, 2, 1, 2, 600, 60, [4]int{20, 35, 50, 62})...) // the record
	all = append(all, stamps(t0, ae, 2, 1, 1, 3, 600, 60, [4]int{21, 40, 60, 80})...) // follower 3, later
	for _, s := range all {
		r.stamp(s)
	}
	r.proposal(t0, t0.Add(90*time.Microsecond))
	l := r.split(1, []int32{2, 3}, 256)
	want := Legs{LeaderSend: 20 * time.Microsecond, ToFollower: 15 * time.Microsecond, Follower: 15 * time.Microsecond,
		ToLeader: 12 * time.Microsecond, LeaderCommit: 28 * time.Microsecond, Split: 1, Commits: 1}
	if l != want {
		t.Errorf("legs %+v, want %+v", l, want)
	}
}
