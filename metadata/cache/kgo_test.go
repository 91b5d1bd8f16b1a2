package cache

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// serve answers Metadata and DescribeCluster from *img on a real listener
// of broker id through Register, as a broker's Mux does.
func serve(t *testing.T, img *atomic.Pointer[image.MetadataImage], id int32) *wire.Server {
	t.Helper()
	mux := wire.NewMux()
	if err := Register(mux, img.Load, testCluster, id, "PLAINTEXT"); err != nil {
		t.Fatal(err)
	}
	ln, err := wire.Listen(wire.ServerConfig{NodeID: id, ClusterID: testCluster, APIs: mux.APIs(), Handler: mux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// A real Kafka client (franz-go's kgo and kadm) sees exactly the image:
// the alive brokers at their advertised address, the topics, and each
// partition's leader, epoch, replicas and ISR.
func TestRealClientSeesTheImage(t *testing.T) {
	var img atomic.Pointer[image.MetadataImage]
	img.Store(image.Empty)
	// Each broker has a listener of its own: a client that reaches one
	// under another's id is told REBOOTSTRAP_REQUIRED (ApiVersions v5).
	addrs := map[int32]string{}
	at := func(id int32, epoch int64) *record.RegisterBrokerRecord {
		ln := serve(t, &img, id)
		addrs[id] = ln.Addr()
		host, portText, err := net.SplitHostPort(ln.Addr())
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(portText)
		r := register(id, epoch)
		r.EndPoints = []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: host, Port: uint16(port)}}
		return r
	}
	orders2 := partition(ordersID, 2, 3, 1, 2)
	orders2.Isr, orders2.LeaderEpoch = []int32{3, 1}, 8
	img.Store(replay(t, image.Empty,
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		at(1, 10), at(2, 11), at(3, 12), at(4, 13),
		unfence(1, 10), unfence(2, 11), unfence(3, 12),
		&record.TopicRecord{Name: "orders", TopicID: ordersID},
		partition(ordersID, 0, 1, 2, 3), partition(ordersID, 1, 2, 3, 1), orders2,
		&record.TopicRecord{Name: "clicks", TopicID: clicksID},
		partition(clicksID, 0, 2),
	))

	// The client's log goes to the test's, so a wait that times out on a
	// loaded machine says what the client was doing.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs[1]), kgo.WithLogger(kgo.BasicLogger(newTestLog(t), kgo.LogLevelInfo, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := brokers.NodeIDs(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("ListBrokers: %v, want the unfenced [1 2 3]", got)
	}
	for _, b := range brokers {
		if got := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); got != addrs[b.NodeID] {
			t.Errorf("broker %d at %s, want %s", b.NodeID, got, addrs[b.NodeID])
		}
	}

	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := topics.Names(); !slices.Equal(got, []string{"clicks", "orders"}) {
		t.Errorf("ListTopics: %v", got)
	}

	md, err := adm.Metadata(ctx, "orders", "clicks")
	if err != nil {
		t.Fatal(err)
	}
	if md.Cluster != testCluster || md.Controller < 1 || md.Controller > 3 {
		t.Errorf("cluster %q controller %d", md.Cluster, md.Controller)
	}
	want := map[string][]kadm.PartitionDetail{
		"orders": {
			{Topic: "orders", Partition: 0, Leader: 1, LeaderEpoch: 3, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
			{Topic: "orders", Partition: 1, Leader: 2, LeaderEpoch: 3, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3, 1}},
			{Topic: "orders", Partition: 2, Leader: 3, LeaderEpoch: 8, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1}},
		},
		"clicks": {{Topic: "clicks", Partition: 0, Leader: 2, LeaderEpoch: 3, Replicas: []int32{2}, ISR: []int32{2}}},
	}
	for name, parts := range want {
		td := md.Topics[name]
		if td.Err != nil || td.ID != kadm.TopicID(img.Load().Topics().TopicByName(name).ID()) {
			t.Errorf("%s: err %v id %v", name, td.Err, td.ID)
		}
		got := td.Partitions.Sorted()
		if len(got) != len(parts) {
			t.Fatalf("%s: partitions %+v", name, got)
		}
		for i, p := range parts {
			g := got[i]
			// kadm sorts replica lists; compare as sets in Kafka's order.
			if g.Partition != p.Partition || g.Leader != p.Leader || g.LeaderEpoch != p.LeaderEpoch || g.Err != nil ||
				!sameSet(g.Replicas, p.Replicas) || !sameSet(g.ISR, p.ISR) || len(g.OfflineReplicas) != 0 {
				t.Errorf("%s-%d: %+v, want %+v", name, p.Partition, g, p)
			}
		}
	}

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeFencedBrokers = true
	resp, err := dc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	var fenced []bool
	for _, b := range resp.Brokers {
		ids, fenced = append(ids, b.NodeID), append(fenced, b.IsFenced)
	}
	if resp.ErrorCode != 0 || resp.ClusterID != testCluster || !slices.Equal(ids, []int32{1, 2, 3, 4}) || !slices.Equal(fenced, []bool{false, false, false, true}) {
		t.Errorf("DescribeCluster v%d: error %d cluster %q brokers %v fenced %v", resp.Version, resp.ErrorCode, resp.ClusterID, ids, fenced)
	}
}

func sameSet(a, b []int32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// testLog writes a client's log lines to the test's log until the test
// ends (a client goroutine may still log while it closes).
type testLog struct {
	t    *testing.T
	mu   *sync.Mutex
	done *bool
}

func newTestLog(t *testing.T) testLog {
	l := testLog{t: t, mu: new(sync.Mutex), done: new(bool)}
	t.Cleanup(func() { l.mu.Lock(); *l.done = true; l.mu.Unlock() })
	return l
}

func (l testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !*l.done {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
