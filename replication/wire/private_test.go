package wire

import (
	"testing"

	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The push replication RPCs travel as Kafka's do: a server that declares
// them decodes and serves them, lists them in ApiVersions, refuses them to
// strangers when members only, and counters count them by their key.
func TestPrivateAPIsCarried(t *testing.T) {
	apis := []APIRange{
		{Key: pushrpc.AppendEntriesKey, MaxVersion: pushrpc.Version, MembersOnly: true},
		{Key: pushrpc.ObserveQuorumKey, MaxVersion: pushrpc.Version},
	}
	counters := NewCounters()
	s, _ := startServer(t, serverOpts{nodeID: 2, apis: apis, counters: counters, handler: HandlerFunc(func(r *Request) {
		switch req := r.Body.(type) {
		case *pushrpc.AppendEntriesRequest:
			r.Respond(&pushrpc.AppendEntriesResponse{LeaderID: req.LeaderID, LeaderEpoch: req.LeaderEpoch, Success: true, MatchOffset: req.BaseOffset + 2})
		case *pushrpc.ObserveQuorumRequest:
			r.Respond(&pushrpc.ObserveQuorumResponse{ErrorCode: kerr.NotLeaderForPartition.Code, LeaderID: 3, LeaderEpoch: 7})
		}
	})})
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: s.Addr(), Counters: counters})
	ae := do(t, c, &pushrpc.AppendEntriesRequest{LeaderID: 1, LeaderEpoch: 4, BaseOffset: 10, Records: []byte("batches")}).(*pushrpc.AppendEntriesResponse)
	if !ae.Success || ae.MatchOffset != 12 || ae.LeaderEpoch != 4 {
		t.Fatalf("AppendEntries answered %+v", ae)
	}
	oq := do(t, c, &pushrpc.ObserveQuorumRequest{ReplicaID: 101}).(*pushrpc.ObserveQuorumResponse)
	if oq.LeaderID != 3 || oq.LeaderEpoch != 7 {
		t.Fatalf("ObserveQuorum answered %+v", oq)
	}
	tr := counters.Snapshot()
	if n := tr.Nodes[1].RequestsSent[pushrpc.AppendEntriesKey].Messages; n != 1 {
		t.Errorf("counted %d AppendEntries requests sent, want 1", n)
	}
	if n := tr.Nodes[2].ResponsesSent[pushrpc.ObserveQuorumKey].Messages; n != 1 {
		t.Errorf("counted %d ObserveQuorum responses sent, want 1", n)
	}

	// ApiVersions lists them beside Kafka's.
	av := do(t, c, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	listed := map[int16]bool{}
	for _, k := range av.ApiKeys {
		listed[k.ApiKey] = true
	}
	if !listed[pushrpc.AppendEntriesKey] || !listed[pushrpc.ObserveQuorumKey] || listed[pushrpc.InstallSnapshotKey] {
		t.Errorf("ApiVersions lists %v", av.ApiKeys)
	}

	// A stranger (no SASL, on a server with a secret) is refused the
	// members-only one with CLUSTER_AUTHORIZATION_FAILED.
	ss, _ := startServer(t, serverOpts{nodeID: 3, apis: apis, secret: "s3cret", handler: HandlerFunc(func(r *Request) { t.Errorf("handler saw %T from a stranger", r.Body) })})
	sc := newClient(t, ClientConfig{From: -1, To: 3, Addr: ss.Addr()})
	if r := do(t, sc, &pushrpc.AppendEntriesRequest{}).(*pushrpc.AppendEntriesResponse); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("stranger's AppendEntries answered %+v", r)
	}
}

// A private key the server does not serve closes the connection, as any
// API it does not serve.
func TestPrivateAPINotServedCloses(t *testing.T) {
	s, _ := startServer(t, serverOpts{nodeID: 2})
	raw := dialRaw(t, s.Addr())
	raw.send(t, &pushrpc.InstallSnapshotRequest{})
	raw.expectClosed(t)
}
