package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// leader waits for a controller that leads and can append.
func (ts *testServers) leader(t *testing.T) *Server {
	t.Helper()
	var l *Server
	waitFor(t, "a writable leader", func() bool {
		for _, id := range []int32{1, 2, 3} {
			if st := ts.byID[id].Raft().Status(); st.Writable {
				l = ts.byID[id]
				return true
			}
		}
		return false
	})
	return l
}

// forgedFetch is a follower's Fetch, as raft sends it, claiming replica
// id and acknowledging everything up to fetchOffset.
func forgedFetch(id, epoch int32, fetchOffset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 17
	req.ClusterID = kmsg.StringPtr(testClusterID)
	req.ReplicaState.ID = id
	req.MaxBytes = 1 << 20
	p := kmsg.NewFetchRequestTopicPartition()
	p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch, p.PartitionMaxBytes = epoch, fetchOffset, epoch, 1<<20
	tp := kmsg.NewFetchRequestTopic()
	tp.TopicID = raft.MetadataTopicID
	tp.Partitions = []kmsg.FetchRequestTopicPartition{p}
	req.Topics = []kmsg.FetchRequestTopic{tp}
	return req
}

func doWith(t *testing.T, cfg wire.ClientConfig, req kmsg.Request) (kmsg.Response, error) {
	t.Helper()
	c, err := wire.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Do(ctx, req)
}

// TestForgedFetchFromAStrangerChangesNothing replays the security review's
// attack: a leader whose followers are gone has records it cannot commit;
// a local process sends it a Fetch v17 claiming a follower's replica id
// and acknowledging them. It is refused with CLUSTER_AUTHORIZATION_FAILED
// and the high watermark stays; the same Fetch from a member is served,
// so it is the membership check that protects the leader.
func TestForgedFetchFromAStrangerChangesNothing(t *testing.T) {
	ts := startServersFetchTimeout(t, 10*time.Second) // the lone leader keeps leading
	l := ts.leader(t)
	st := l.Raft().Status()
	var follower int32
	for _, id := range []int32{1, 2, 3} {
		if id != l.ID() {
			follower = id
			if err := ts.byID[id].Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit := l.Raft().Append(st.Epoch, [][]byte{[]byte("uncommitted-1"), []byte("uncommitted-2")})
	var before raft.Status
	waitFor(t, "the leader to write records it cannot commit", func() bool {
		before = l.Raft().Status().Status
		return before.LogEndOffset > before.HighWatermark && before.Role == raft.Leader
	})

	forged := forgedFetch(follower, st.Epoch, before.LogEndOffset)
	resp, err := doWith(t, wire.ClientConfig{From: 900, To: l.ID(), Addr: l.Addr()}, forged)
	if err != nil {
		t.Fatal(err)
	}
	if fr := resp.(*kmsg.FetchResponse); fr.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(fr.Topics) != 0 {
		t.Fatalf("forged Fetch answered error %d with %d topics, want CLUSTER_AUTHORIZATION_FAILED and none", fr.ErrorCode, len(fr.Topics))
	}
	// Refused requests never reach raft, so nothing can change later.
	after := l.Raft().Status()
	if after.HighWatermark != before.HighWatermark || after.Epoch != st.Epoch || after.Role != raft.Leader {
		t.Fatalf("after the forged Fetch: HWM %d (was %d), epoch %d, %v", after.HighWatermark, before.HighWatermark, after.Epoch, after.Role)
	}
	if r := ts.counters.Refusals(l.ID()); r.Unauthorized != 1 {
		t.Errorf("Refusals(%d) = %+v, want 1 unauthorized", l.ID(), r)
	}

	// The same Fetch from a member is an acknowledgement: it commits. The
	// log may have grown past before's end meanwhile (the controller's
	// own records come in beside the test's), so the member fetches from
	// the log end it sees until the test's records commit.
	member := wire.ClientConfig{From: 901, To: l.ID(), Addr: l.Addr(), SASL: wire.MemberMechanism(ts.secret)}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err = doWith(t, member, forgedFetch(follower, st.Epoch, l.Raft().Status().LogEndOffset))
		if err != nil {
			t.Fatal(err)
		}
		if fr := resp.(*kmsg.FetchResponse); fr.ErrorCode != 0 {
			t.Fatalf("member's Fetch: error %d", fr.ErrorCode)
		}
		select {
		case <-commit.Done():
			if err := commit.Err(); err != nil {
				t.Fatalf("commit: %v", err)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("a member's acknowledgements did not commit the records: %+v", l.Raft().Status())
		}
	}
}

func TestWrongSecretIsRefused(t *testing.T) {
	ts := startServers(t)
	before := ts.counters.Refusals(1).AuthFailures
	_, err := doWith(t, wire.ClientConfig{From: 900, To: 1, Addr: ts.byID[1].Addr(), SASL: wire.MemberMechanism("0000000000000000000000000000000000000000")}, kmsg.NewPtrVoteRequest())
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong secret: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	if got := ts.counters.Refusals(1).AuthFailures; got != before+1 {
		t.Errorf("AuthFailures %d, want %d", got, before+1)
	}
	// The nodes themselves authenticated: their links carried the
	// exchange and each controller counted members.
	// A node hears from its peers once an election has begun: wait for it.
	waitFor(t, "the broker and the controllers to authenticate to each other", func() bool {
		tr := ts.counters.Snapshot()
		return tr.Nodes[101].RequestsSent[kmsg.SASLAuthenticate.Int16()].Messages > 0 && tr.Nodes[1].Authenticated > 0
	})
}

// Users' own tools need no credentials for ApiVersions and DescribeQuorum.
func TestFranzGoNeedsNoCredentials(t *testing.T) {
	ts := startServers(t)
	l := ts.leader(t)
	for _, addr := range []string{l.Addr(), ts.byID[101].Addr()} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if _, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest()); err != nil {
			t.Fatalf("ApiVersions via kgo from %s: %v", addr, err)
		}
		req := kmsg.NewPtrDescribeQuorumRequest()
		tp := kmsg.NewDescribeQuorumRequestTopic()
		tp.Topic = raft.MetadataTopic
		tp.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
		req.Topics = []kmsg.DescribeQuorumRequestTopic{tp}
		resp, err := cl.SeedBrokers()[0].Request(ctx, req)
		cancel()
		cl.Close()
		if err != nil {
			t.Fatalf("DescribeQuorum via kgo from %s: %v", addr, err)
		}
		dq := resp.(*kmsg.DescribeQuorumResponse)
		if dq.ErrorCode != 0 || len(dq.Topics) != 1 || dq.Topics[0].Partitions[0].ErrorCode != 0 || dq.Topics[0].Partitions[0].LeaderID != l.ID() {
			t.Fatalf("DescribeQuorum via kgo from %s: %+v", addr, dq)
		}
	}
}

func TestSecretFileIsPrivateAndReused(t *testing.T) {
	dir := t.TempDir()
	s1, err := LoadSecret(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, SecretFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	if len(s1) != 2*secretBytes {
		t.Errorf("secret of %d characters", len(s1))
	}
	s2, err := LoadSecret(dir)
	if err != nil || s2 != s1 {
		t.Fatalf("second load: %q, %v; want the first secret", s2, err)
	}
	if s3, _ := LoadSecret(t.TempDir()); s3 == s1 {
		t.Error("two playgrounds share a secret")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data folder holds %d files, want only the secret", len(entries))
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSecret(dir); err == nil {
		t.Error("a secret others can read was accepted")
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	if _, err := LoadSecret(dir); err == nil {
		t.Error("a short secret was accepted")
	}
}

// A restarted node reads the same secret and is a member again.
func TestRestartReusesTheSecret(t *testing.T) {
	ts := startServers(t)
	l := ts.leader(t)
	dir := filepath.Dir(filepath.Dir(l.Raft().Dir()))
	secret, err := LoadSecret(dir)
	if err != nil || secret != ts.secret {
		t.Fatalf("reloaded secret %q, %v; want the first", secret, err)
	}
	b := ts.byID[101]
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted broker to fetch from the leader again", func() bool {
		st := b.Raft().Status()
		return st.Role == raft.Follower && st.LeaderID > 0 && st.HighWatermark >= 1
	})
}
