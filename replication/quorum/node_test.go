package quorum

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// committedLog reads every whole batch of node id's log below hwm.
func (c *testCluster) committedLog(id int32, hwm int64) []byte {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []byte
	for off := int64(0); off < hwm; {
		data, _, err := c.nodes[id].ReadLog(ctx, off, 1<<20)
		if err != nil {
			c.t.Fatalf("read node %d's log at %d: %v", id, off, err)
		}
		n := 0
		err = storage.Batches(data, func(pos int, b *storage.Batch) error {
			if b.NextOffset() > hwm {
				return errStopRead
			}
			n = pos + b.Size()
			off = b.NextOffset()
			return nil
		})
		if err != nil && !errors.Is(err, errStopRead) {
			c.t.Fatalf("node %d's log at %d: %v", id, off, err)
		}
		if n == 0 {
			break
		}
		out = append(out, data[:n]...)
	}
	return out
}

var errStopRead = errors.New("stop")

// TestFailoverTruncatesAndCatchesUp: three
// voters commit 10,000 records, the leader dies with an uncommitted tail,
// a new leader commits 10,000 more, and the old leader comes back, cuts
// its tail and ends with the same committed log as the others, byte for
// byte.
// TestFailoverTruncatesAndCatchesUp runs in both replication modes, with
// an observer: under push the leader pushes to the voters and, once it
// asks, to the observer, over the same sockets.
func TestFailoverTruncatesAndCatchesUp(t *testing.T) {
	for _, mode := range []raft.Replication{raft.Pull, raft.Push} {
		t.Run(mode.String(), func(t *testing.T) { testFailover(t, mode) })
	}
}

func testFailover(t *testing.T, mode raft.Replication) {
	c := newTestCluster(t, clusterOpts{voters: 3, observers: 1, tweak: func(cfg *Config) { cfg.Raft.Replication = mode }})
	old, epoch := c.leader(10 * time.Second)
	last := c.appendN(old, 10_000, 100, 500, "first")
	var hwm int64
	c.waitFor("the leader to commit all it has", 5*time.Second, func() bool {
		s := c.nodes[old].Status()
		hwm = s.HighWatermark
		return s.HighWatermark > last && s.HighWatermark == s.LogEndOffset
	})

	// Cut the leader off and give it records nobody else will see: its
	// uncommitted tail. Then kill it; FlushNever keeps what it wrote.
	c.partition(old)
	tail := c.nodes[old].appendNow([]byte("lost-1"), []byte("lost-2"), []byte("lost-3"))
	c.waitFor("the isolated leader to append its tail", 5*time.Second, func() bool {
		return c.nodes[old].Status().LogEndOffset >= hwm+3
	})
	if err := c.nodes[old].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(tail); !errors.Is(err, ErrNotRunning) && !errors.Is(err, ErrNotLeader) {
		t.Fatalf("the lost tail's commit: %v", err)
	}
	if st := c.nodes[old].Status(); st.State != StateKilled || st.LogEndOffset < hwm+3 {
		t.Fatalf("killed leader: %+v", st)
	}
	c.links.HealAll()

	leader, newEpoch := c.leader(10*time.Second, old)
	if leader == old || newEpoch <= epoch {
		t.Fatalf("new leader %d in epoch %d after leader %d of epoch %d", leader, newEpoch, old, epoch)
	}
	c.appendN(leader, 10_000, 100, 500, "second")

	c.start(old)
	c.waitFor("the old leader to catch up", 20*time.Second, func() bool {
		s, l := c.nodes[old].Status(), c.nodes[leader].Status()
		return s.Role == raft.Follower && s.LeaderID == leader && s.HighWatermark == l.HighWatermark && s.LogEndOffset == l.LogEndOffset
	})
	if st := c.nodes[old].Status(); st.Truncations < 1 || len(c.eventsOf(raft.EventTruncated, old)) == 0 {
		t.Fatalf("the old leader never truncated its tail: %+v\n%s", st, c.eventLog())
	}
	if len(c.recoveries(old)) != 2 {
		t.Errorf("recovery events of node %d: %v", old, c.recoveries(old))
	}

	final := c.nodes[leader].Status().HighWatermark
	c.waitFor("every node to apply the committed log", 10*time.Second, func() bool {
		for _, id := range c.ids() {
			if c.tally(id).NextOffset < final {
				return false
			}
		}
		return true
	})
	want := c.committedLog(leader, final)
	if bytes.Contains(want, []byte("lost-1")) {
		t.Fatal("the old leader's uncommitted record was committed")
	}
	var tally Tally
	for _, id := range c.ids() {
		if got := c.committedLog(id, final); !bytes.Equal(got, want) {
			t.Fatalf("node %d's committed log (%d bytes) differs from leader %d's (%d bytes)", id, len(got), leader, len(want))
		}
		got := c.tally(id)
		if id == c.voters[0] {
			tally = got
		} else if got != tally {
			t.Errorf("node %d tally %+v, node %d tally %+v", id, got, c.voters[0], tally)
		}
	}
	if tally.Records != 20_000 {
		t.Errorf("%d records committed, want 20000", tally.Records)
	}
	// The mode's own RPCs carried the records, to the observer as well.
	tr := c.counters.Snapshot()
	fetches, pushes := int64(0), int64(0)
	for _, n := range tr.Nodes {
		fetches += int64(n.RequestsReceived[kmsg.Fetch.Int16()].Messages)
		pushes += int64(n.RequestsReceived[pushrpc.AppendEntriesKey].Messages)
	}
	observer := tr.Nodes[c.ids()[len(c.ids())-1]]
	switch mode {
	case raft.Pull:
		if fetches == 0 || pushes != 0 {
			t.Errorf("pull: %d Fetch and %d AppendEntries requests", fetches, pushes)
		}
	case raft.Push:
		if fetches != 0 || pushes == 0 || observer.RequestsReceived[pushrpc.AppendEntriesKey].Messages == 0 {
			t.Errorf("push: %d Fetch and %d AppendEntries requests, the observer received %d", fetches, pushes, observer.RequestsReceived[pushrpc.AppendEntriesKey].Messages)
		}
	}
}

// TestPartitionedLeaderResignsAndRejoins: a leader cut off both ways resigns through check-quorum while the
// majority elects another; after healing it follows without another
// election, thanks to pre-vote.
func TestPartitionedLeaderResignsAndRejoins(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3})
	old, epoch := c.leader(10 * time.Second)
	c.appendN(old, 100, 100, 100, "before")

	c.partition(old)
	c.waitFor("check-quorum to make the cut-off leader resign", 10*time.Second, func() bool {
		return c.nodes[old].Status().Role != raft.Leader
	})
	leader, newEpoch := c.leader(10*time.Second, old)
	// (Two followers that time out together may split their votes: the
	// new epoch is then above epoch+1.)
	if leader == old || newEpoch <= epoch {
		t.Fatalf("majority elected %d in epoch %d; the old leader %d led epoch %d\n%s", leader, newEpoch, old, epoch, c.eventLog())
	}
	c.appendN(leader, 100, 100, 100, "during")
	// Cut off, the old leader only ever asks for pre-votes: as Kafka's
	// does, it leaves its resigned epoch for the next one, unattached,
	// and never goes past it.
	c.waitFor("the old leader to ask for pre-votes", 10*time.Second, func() bool {
		return len(c.eventsOf(raft.EventRoleChanged, old)) > 0 && c.nodes[old].Status().Role == raft.Prospective
	})
	if e := c.nodes[old].Status().Epoch; e > epoch+1 {
		t.Fatalf("the cut-off node bumped its epoch to %d (it led %d)", e, epoch)
	}

	elections := len(c.eventsOf(raft.EventElectionWon, 0))
	c.links.HealAll()
	c.waitFor("the old leader to follow the new one", 10*time.Second, func() bool {
		s := c.nodes[old].Status()
		return s.Role == raft.Follower && s.LeaderID == leader && s.HighWatermark == c.nodes[leader].Status().HighWatermark
	})
	c.appendN(leader, 100, 100, 100, "after")
	for _, id := range c.voters {
		if s := c.nodes[id].Status(); s.Epoch != newEpoch {
			t.Errorf("node %d in epoch %d after healing, want %d: an election happened", id, s.Epoch, newEpoch)
		}
	}
	if n := len(c.eventsOf(raft.EventElectionWon, 0)); n != elections {
		t.Errorf("%d elections after healing\n%s", n-elections, c.eventLog())
	}
	if s := c.nodes[leader].Status(); s.Role != raft.Leader || s.Epoch != newEpoch {
		t.Errorf("the new leader lost its leadership: %+v", s)
	}
}

// TestGracefulStopHandsOver: a leader that stops resigns with
// EndQuorumEpoch, a successor takes over at once, and the stopped node
// starts again from its folder as a follower.
func TestGracefulStopHandsOver(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3, observers: 1, flush: storage.FlushAlways})
	old, epoch := c.leader(10 * time.Second)
	c.appendN(old, 200, 100, 50, "x")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.nodes[old].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	st := c.nodes[old].Status()
	if st.State != StateStopped {
		t.Fatalf("after Stop: %+v", st)
	}
	if len(c.eventsOf(raft.EventEndQuorumEpochSent, old)) == 0 {
		t.Errorf("no EndQuorumEpoch from the stopping leader\n%s", c.eventLog())
	}
	leader, newEpoch := c.leader(10*time.Second, old)
	if newEpoch <= epoch || leader == old {
		t.Fatalf("leader %d epoch %d after the stop of %d in epoch %d", leader, newEpoch, old, epoch)
	}
	if got := c.nodes[old].appendNow([]byte("x")); !errors.Is(waitErr(got), ErrNotRunning) {
		t.Errorf("append to a stopped node: %v", got.Err())
	}
	c.appendN(leader, 100, 100, 50, "y")
	c.start(old)
	c.waitFor("the restarted node to follow", 10*time.Second, func() bool {
		s := c.nodes[old].Status()
		return s.Role == raft.Follower && s.LeaderID == leader && c.tally(old) == c.tally(leader)
	})
	c.waitFor("the observer to follow the new leader", 10*time.Second, func() bool {
		s := c.nodes[101].Status()
		return s.Role == raft.Follower && !s.Voter && s.LeaderID == leader
	})
}

// waitErr waits for a commit's outcome; a commit that never ends is a
// failure of its own, not a hang.
func waitErr(c *Commit) error {
	select {
	case <-c.Done():
		return c.Err()
	case <-time.After(30 * time.Second):
		return errors.New("the commit neither completed nor failed within 30s")
	}
}

// TestSnapshotCatchUp: a follower that was down while the leader
// snapshotted past its log end fetches the snapshot, loads its listener's
// state from it and
// fetches the rest.
// TestSnapshotCatchUp runs in both modes: under push the leader sends its
// snapshot with InstallSnapshot into the follower's disk log.
func TestSnapshotCatchUp(t *testing.T) {
	for _, mode := range []raft.Replication{raft.Pull, raft.Push} {
		t.Run(mode.String(), func(t *testing.T) { testSnapshotCatchUp(t, mode) })
	}
}

func testSnapshotCatchUp(t *testing.T, mode raft.Replication) {
	c := newTestCluster(t, clusterOpts{voters: 3, tweak: func(cfg *Config) { cfg.Raft.Replication = mode }})
	leader, _ := c.leader(10 * time.Second)
	c.appendN(leader, 100, 100, 100, "a")
	var down int32
	for _, id := range c.voters {
		if id != leader {
			down = id
			break
		}
	}
	c.waitFor("the follower to apply", 5*time.Second, func() bool {
		return c.tally(down).Records == 100
	})
	c.nodes[down].Kill()
	c.appendN(leader, 500, 100, 100, "b")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	id, err := c.nodes[leader].Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.nodes[leader].Status(); st.LogStartOffset != id.EndOffset || st.LatestSnapshot != id || st.SnapshotsTaken != 1 {
		t.Fatalf("after snapshot %v: %+v", id, st)
	}
	if _, err := c.nodes[leader].Snapshot(ctx); err == nil {
		t.Error("a second snapshot with nothing new committed succeeded")
	}
	c.appendN(leader, 50, 100, 50, "c")
	c.start(down)
	c.waitFor("the follower to catch up through the snapshot", 10*time.Second, func() bool {
		s := c.nodes[down].Status()
		return c.tally(down) == c.tally(leader) && s.SnapshotsLoaded == 1
	})
	if s := c.nodes[down].Status(); s.LogStartOffset != id.EndOffset || s.LatestSnapshot != id {
		t.Errorf("follower after catching up: %+v", s)
	}
	if len(c.eventsOf(raft.EventSnapshotFetched, down)) == 0 || len(c.eventsOf(raft.EventSnapshotTaken, leader)) == 0 {
		t.Errorf("snapshot events missing\n%s", c.eventLog())
	}
	// Restarting the leader loads its own snapshot from disk and replays
	// the tail on top: the same Tally.
	want := c.tally(leader)
	c.nodes[leader].Kill()
	c.start(leader)
	c.waitFor("the restarted leader to rebuild its tally", 10*time.Second, func() bool {
		return c.tally(leader).NextOffset >= want.NextOffset
	})
	if got := c.tally(leader); got.Records != want.Records || got.Bytes != want.Bytes || got.CRC != want.CRC {
		t.Errorf("tally after restart %+v, before %+v", got, want)
	}
}

// TestResign: Resign hands the leadership over without stopping, after
// what the old leader committed.
func TestResign(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3})
	old, epoch := c.leader(10 * time.Second)
	if err := waitErr(c.nodes[old].appendNow([]byte("before the resignation"))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var follower int32
	for _, id := range c.voters {
		if id != old {
			follower = id
		}
	}
	if err := c.nodes[follower].Resign(ctx); !errors.Is(err, ErrNotLeader) {
		t.Errorf("a follower resigned: %v", err)
	}
	if err := c.nodes[old].Resign(ctx); err != nil {
		t.Fatal(err)
	}
	leader, newEpoch := c.leader(10 * time.Second)
	if newEpoch <= epoch {
		t.Fatalf("epoch %d after resigning %d", newEpoch, epoch)
	}
	if leader == old {
		t.Logf("node %d was elected again", old)
	}
	if c.nodes[old].Status().State != StateRunning {
		t.Errorf("resigned node stopped")
	}
}

// TestWrongClusterAndNonVoter: the quorum's refusals reach the wire.
func TestWrongClusterAndNonVoter(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3})
	leader, epoch := c.leader(10 * time.Second)
	addr, _ := c.addr(leader)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A stranger is refused before raft sees the request.
	anon, err := wire.NewClient(wire.ClientConfig{From: 42, To: leader, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	resp, err := anon.Do(ctx, voteRequest(leader, epoch+1))
	if err != nil {
		t.Fatal(err)
	}
	if code := errorCode(resp); code != 31 {
		t.Errorf("vote from a stranger: error %d (%s), want CLUSTER_AUTHORIZATION_FAILED", code, raft.ErrorName(code))
	}
	// A member's misconfigured requests reach raft, which refuses them.
	cl, err := wire.NewClient(wire.ClientConfig{From: 42, To: leader, Addr: addr, SASL: wire.MemberMechanism(testSecret)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	wrong := "another-cluster"
	v := voteRequest(leader, epoch+1)
	v.ClusterID = &wrong
	resp, err = cl.Do(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	if code := errorCode(resp); code != 104 {
		t.Errorf("vote with a wrong cluster id: error %d (%s), want INCONSISTENT_CLUSTER_ID", code, raft.ErrorName(code))
	}
	resp, err = cl.Do(ctx, beginQuorumEpoch(42, epoch+1))
	if err != nil {
		t.Fatal(err)
	}
	// Kafka 3.9+ has no INCONSISTENT_VOTER_SET: a sender outside the
	// static voter set is an invalid request.
	if code := errorCode(resp); code != 42 {
		t.Errorf("BeginQuorumEpoch from a non-voter: error %d (%s), want INVALID_REQUEST", code, raft.ErrorName(code))
	}
	if s := c.nodes[leader].Status(); s.Role != raft.Leader || s.Epoch != epoch {
		t.Errorf("the leader was disturbed: %+v", s)
	}
}

// TestUnsafeNewsIsIgnored: a request claiming a second leader of the
// current epoch is refused and the node goes on.
func TestUnsafeNewsIsIgnored(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3})
	leader, epoch := c.leader(10 * time.Second)
	var follower, other int32
	for _, id := range c.voters {
		if id != leader {
			if follower == 0 {
				follower = id
			} else {
				other = id
			}
		}
	}
	addr, _ := c.addr(follower)
	cl, err := wire.NewClient(wire.ClientConfig{From: other, To: follower, Addr: addr, SASL: wire.MemberMechanism(testSecret)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cl.Do(ctx, beginQuorumEpoch(other, epoch)); err != nil {
		t.Fatal(err)
	}
	c.appendN(leader, 10, 10, 10, "after")
	if s := c.nodes[follower].Status(); s.State != StateRunning || s.LeaderID != leader || s.Epoch != epoch {
		t.Fatalf("follower after a claim of a second leader: %+v", s)
	}
}

// A Vote whose epoch cannot be incremented is refused as unsafe news: the
// node answers INVALID_REQUEST, keeps its epoch, and its status counts the
// refusal and says what it was.
func TestForgedEpochIsRefusedAndCounted(t *testing.T) {
	c := newTestCluster(t, clusterOpts{voters: 3})
	leader, epoch := c.leader(10 * time.Second)
	follower := c.voters[0]
	if follower == leader {
		follower = c.voters[1]
	}
	addr, _ := c.addr(follower)
	// A member that went wrong, not a stranger: it authenticates.
	cl, err := wire.NewClient(wire.ClientConfig{From: leader, To: follower, Addr: addr, SASL: wire.MemberMechanism(testSecret)})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v := voteRequest(follower, math.MaxInt32)
	v.Topics[0].Partitions[0].CandidateID = leader
	resp, err := cl.Do(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	if code := errorCode(resp); code != 42 {
		t.Errorf("Vote in epoch 2^31-1: error %d (%s), want INVALID_REQUEST", code, raft.ErrorName(code))
	}
	c.waitFor("the refusal in the follower's status", 5*time.Second, func() bool { return c.nodes[follower].Status().Unsafe == 1 })
	st := c.nodes[follower].Status()
	if st.LastUnsafe == nil || st.LastUnsafe.Refused == "" || st.Epoch != epoch {
		t.Errorf("after the forged vote: epoch %d (want %d), last refusal %+v", st.Epoch, epoch, st.LastUnsafe)
	}
}
