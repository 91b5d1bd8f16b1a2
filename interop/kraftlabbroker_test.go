package interop

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/server"
	"github.com/kraftlab/kraftlab/replication/quorum"
)

// A kraftlab broker follows a real Kafka 4.4 controller: its raft client
// authenticates with SCRAM (credentials kafka-storage format --add-scram
// wrote into Kafka's bootstrap metadata) and fetches Kafka's metadata log
// as an observer, to Kafka's high watermark. Its metadata loader applies
// it until the first record kraftlab does not model, and says so, naming
// the record's type and offset; it skips nothing.
//
// Where it stops: Kafka writes its bootstrap records inside a metadata
// transaction, and BeginTransactionRecord (apiKey 23) is the second record
// of its log; kraftlab's records and loader model no transactions (nor
// RegisterControllerRecord, which follows). The broker's registration is
// refused too (UNSUPPORTED_VERSION): Kafka's bootstrap finalizes
// group.version, transaction.version, share.version, streams.version and
// eligible.leader.replicas.version, which a kraftlab broker does not
// support.
func TestKraftlabBrokerFollowsKafkaController(t *testing.T) {
	k := needKafka(t)
	const secret = "0123456789abcdef0123456789abcdef"
	c, err := StartSCRAMController(context.Background(), k, t.TempDir(), "kraftlab-member", secret)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	tm, _ := cluster.ProfileTiming(cluster.ProfileFast)
	var log strings.Builder
	srv, err := server.New(server.Config{
		Kind: server.Broker,
		Raft: quorum.Config{
			Raft:   tm.RaftConfig(101, []int32{1}, c.ClusterID),
			Dir:    server.NodeDir(t.TempDir(), 101),
			Peers:  func(id int32) (string, bool) { return c.Addr, id == 1 },
			Flush:  tm.Flush,
			Secret: secret,
		},
		Broker: server.BrokerConfig{HeartbeatInterval: tm.BrokerHeartbeatInterval},
		Logger: slog.New(slog.NewTextHandler(&syncWriter{b: &log}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Kill()
	why := func() string { return "kraftlab broker's log:\n" + log.String() + "\nKafka controller:\n" + c.Log(30) }
	deadline := time.Now().Add(90 * time.Second)
	for {
		st := srv.Raft().Status()
		l := srv.Loader()
		if st.LeaderID == 1 && st.HighWatermark > 1 && st.LogEndOffset >= st.HighWatermark && l != nil && l.Metrics().MetadataLoadErrorCount > 0 {
			t.Logf("raft: leader %d epoch %d, log end %d, high watermark %d; loader: %+v", st.LeaderID, st.Epoch, st.LogEndOffset, st.HighWatermark, l.Metrics())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kraftlab broker did not fetch Kafka's log and stop at a record it does not model: %+v\n%s", st, why())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The loader names where and why it stopped, and applied nothing past it.
	if !strings.Contains(log.String(), `msg="metadata load stopped"`) || !strings.Contains(log.String(), "unknown metadata record: apiKey ") {
		t.Fatalf("the loader stopped without saying which record:\n%s", why())
	}
	if m := srv.Loader().Metrics(); m.LastAppliedRecordOffset >= srv.Raft().Status().HighWatermark-1 {
		t.Errorf("the loader applied to %d of Kafka's %d offsets past a record it cannot read", m.LastAppliedRecordOffset, srv.Raft().Status().HighWatermark)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
