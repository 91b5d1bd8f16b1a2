package interop

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/server"
)

// kraftlabBroker is a kraftlab broker (id 101) whose raft client follows
// the Kafka controller c, authenticating with SCRAM as kafka-storage
// format --add-scram set it up; log holds its log.
type kraftlabBroker struct {
	srv *server.Server
	log syncWriter
}

const memberSecret = "0123456789abcdef0123456789abcdef"

func startKraftlabBroker(t *testing.T, c *Controller) *kraftlabBroker {
	t.Helper()
	tm, _ := cluster.ProfileSettings(cluster.ProfileFast)
	b := &kraftlabBroker{log: syncWriter{b: &strings.Builder{}}}
	srv, err := server.New(server.Config{
		Kind: server.Broker,
		Raft: quorum.Config{
			Raft:   tm.RaftConfig(101, []int32{1}, c.ClusterID),
			Dir:    server.NodeDir(t.TempDir(), 101),
			Peers:  func(id int32) (string, bool) { return c.Addr, id == 1 },
			Flush:  tm.Flush,
			Secret: memberSecret,
		},
		Settings: server.Settings{BrokerHeartbeatInterval: tm.BrokerHeartbeatInterval},
		Logger:   slog.New(slog.NewTextHandler(&b.log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Kill() })
	b.srv = srv
	return b
}

// caughtUp reports whether the broker fetched to Kafka's high watermark
// and its loader applied all of it.
func (b *kraftlabBroker) caughtUp() bool {
	st := b.srv.Raft().Status()
	l := b.srv.Loader()
	return st.LeaderID == 1 && st.HighWatermark > 1 && l != nil && l.Metrics().LastAppliedRecordOffset >= st.HighWatermark-1
}

func (b *kraftlabBroker) describe(c *Controller) func() string {
	return func() string {
		st := b.srv.Raft().Status()
		lc := b.srv.Lifecycle()
		return fmt.Sprintf("raft: leader %d, log end %d, high watermark %d; loader: %+v, err %v; lifecycle %v, fenced %v, failures %+v\nkraftlab broker's log:\n%s\nKafka controller:\n%s",
			st.LeaderID, st.LogEndOffset, st.HighWatermark, b.srv.Loader().Metrics(), b.srv.Loader().Err(),
			lc.State(), lc.Fenced(), lc.Failures(), b.log.String(), c.Log(30))
	}
}

// A kraftlab broker follows a real Kafka 4.4 controller: its raft client
// authenticates with SCRAM (credentials kafka-storage format --add-scram
// wrote into Kafka's bootstrap metadata) and fetches Kafka's metadata log
// as an observer, to Kafka's high watermark, and its metadata loader
// applies all of it: the bootstrap transaction (BeginTransactionRecord,
// the FeatureLevelRecords, the UserScramCredentialRecord, a ConfigRecord,
// EndTransactionRecord), then the controller's RegisterControllerRecord
// and its NoOpRecords.
//
// Where it stops: Kafka refuses the broker's BrokerRegistration
// (UNSUPPORTED_VERSION), since Kafka's bootstrap finalizes group.version,
// transaction.version, share.version, streams.version and
// eligible.leader.replicas.version, which a kraftlab broker does not
// support. TestKraftlabBrokerRegistersWithKafkaController formats them
// away.
func TestKraftlabBrokerFollowsKafkaController(t *testing.T) {
	k := needKafka(t)
	c, err := StartSCRAMController(context.Background(), k, t.TempDir(), "kraftlab-member", memberSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	b := startKraftlabBroker(t, c)
	why := b.describe(c)
	// The controller registers itself once its bootstrap transaction is
	// committed, so wait for both.
	poll.Until(t, 90*time.Second, "the kraftlab broker applies Kafka's whole metadata log, the controller's registration in it", func() bool {
		return b.caughtUp() && b.srv.Loader().Image().Cluster().Controller(1) != nil
	}, why)

	l := b.srv.Loader()
	img := l.Image()
	if m := l.Metrics(); m.MetadataLoadErrorCount != 0 || l.Err() != nil || m.CurrentMetadataVersion != record.MetadataVersion4_4IV2 {
		t.Fatalf("loader %+v, err %v: want Kafka's bootstrap metadata.version %d and no load error\n%s", m, l.Err(), record.MetadataVersion4_4IV2, why())
	}
	for _, f := range []string{"group.version", "transaction.version", "share.version", "streams.version", "eligible.leader.replicas.version"} {
		if level, ok := img.Features().Level(f); !ok || level < 1 {
			t.Errorf("%s not finalized by the bootstrap transaction: %d, %v", f, level, ok)
		}
	}
	reg := img.Cluster().Controller(1)
	if reg == nil {
		t.Fatalf("no registration of controller 1: controllers %v\n%s", img.Cluster().ControllerIDs(), why())
	}
	_, port, _ := net.SplitHostPort(c.Addr)
	e, ok := reg.Listener("CONTROLLER")
	if !ok || strconv.Itoa(int(e.Port)) != port || e.SecurityProtocol != record.SecurityProtocolSASLPlain {
		t.Errorf("controller 1's CONTROLLER listener %+v, %v; want SASL_PLAINTEXT on port %s", e, ok, port)
	}
	if img.Scram().Credential(record.ScramSHA256, "kraftlab-member") == nil {
		t.Errorf("no SCRAM-SHA-256 credential of kraftlab-member: users %v", img.Scram().Users(record.ScramSHA256))
	}
	if v, _ := img.Configs().Resource(image.ConfigResource{Type: record.ResourceBroker}).Get("min.insync.replicas"); v != "1" {
		t.Errorf("cluster default min.insync.replicas %q, want the bootstrap's 1", v)
	}

	// Kafka refuses the registration: features the broker does not support.
	poll.Until(t, 30*time.Second, "Kafka refuses the broker's registration", func() bool {
		return strings.Contains(b.log.String(), "UNSUPPORTED_VERSION")
	}, why)
	if lc := b.srv.Lifecycle(); lc.BrokerEpoch() != -1 || !lc.Fenced() {
		t.Errorf("the broker registered: epoch %d, fenced %v", lc.BrokerEpoch(), lc.Fenced())
	}
}

// With the features a kraftlab broker does not support formatted at level
// 0 (kafka-storage format --feature NAME=0), Kafka accepts its
// BrokerRegistration and unfences it once it has caught up; the broker
// reaches RUNNING and its own loader sees its registration, unfenced, in
// Kafka's log. kafka-topics --create through the kraftlab broker is
// forwarded to Kafka's controller, which places the partitions on it; the
// broker applies Kafka's TopicRecord and PartitionRecords and leads them.
func TestKraftlabBrokerRegistersWithKafkaController(t *testing.T) {
	k := needKafka(t)
	features := []string{"group.version=0", "transaction.version=0", "share.version=0", "streams.version=0", "eligible.leader.replicas.version=0"}
	c, err := StartSCRAMControllerWithFeatures(context.Background(), k, t.TempDir(), "kraftlab-member", memberSecret, features)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	b := startKraftlabBroker(t, c)
	why := b.describe(c)
	lc := b.srv.Lifecycle()
	poll.Until(t, 90*time.Second, "the kraftlab broker registers with Kafka and runs unfenced", func() bool {
		return lc.State() == server.BrokerRunning && !lc.Fenced() && lc.BrokerEpoch() > 0
	}, why)
	poll.Until(t, 30*time.Second, "the broker's loader sees its own unfenced registration", func() bool {
		reg := b.srv.Loader().Image().Cluster().Broker(101)
		return reg != nil && !reg.Fenced && reg.Epoch == lc.BrokerEpoch()
	}, why)
	if l := b.srv.Loader(); l.Err() != nil || l.Metrics().MetadataLoadErrorCount != 0 {
		t.Errorf("loader err %v, metrics %+v", l.Err(), l.Metrics())
	}

	if r := runTool(t, k, MainTopics, "--bootstrap-server", b.srv.Addr(), "--create", "--topic", "on-kafka", "--partitions", "2", "--replication-factor", "1"); r.Err != nil {
		t.Fatalf("kafka-topics --create through the kraftlab broker: %v\n%s", r.Err, why())
	}
	poll.Until(t, 30*time.Second, "the broker applies Kafka's topic and leads its partitions", func() bool {
		ti := b.srv.Loader().Image().Topics().TopicByName("on-kafka")
		if ti == nil || len(ti.PartitionIDs()) != 2 {
			return false
		}
		leading := 0
		for _, r := range b.srv.ReplicaManager().Stats().Partitions {
			if r.Topic == "on-kafka" && r.Role == partition.RoleLeader && ti.Partition(r.Partition) != nil && ti.Partition(r.Partition).Leader == 101 {
				leading++
			}
		}
		return leading == 2
	}, why)
	r := runTool(t, k, MainTopics, "--bootstrap-server", b.srv.Addr(), "--describe", "--topic", "on-kafka")
	if r.Err != nil || strings.Count(r.Stdout, "Leader: 101\tReplicas: 101\tIsr: 101") != 2 {
		t.Errorf("kafka-topics --describe: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
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

// String is what was written so far.
func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
