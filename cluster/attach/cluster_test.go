package attach

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A kraftlab playground speaks Kafka's protocol too, so attach reads it
// over the wire as it reads Apache Kafka: what it reads agrees with the
// playground's own view, a killed controller becomes an inferred
// election, and actions are refused. (interop's TestAttachToKafka does
// the same against Kafka 4.4.)
func TestAttachReadsAPlayground(t *testing.T) {
	ctx := context.Background()
	cfg, err := cluster.NewConfig(3, 3, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := engine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	own := waitOwn(t, pg, "a leader and 3 unfenced brokers", func(v *view.View) bool { return v.LeaderID > 0 && unfencedBrokers(v) == 3 })
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 3, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	var brokers, controllers []string
	for _, n := range own.Nodes {
		if n.Kind == view.KindBroker {
			brokers = append(brokers, n.Listener)
		} else {
			controllers = append(controllers, n.Listener)
		}
	}
	c, err := Dial(ctx, Config{Bootstrap: brokers, BootstrapController: controllers, Interval: time.Hour, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := refreshUntil(t, c, "the topic's partitions with leaders and high watermarks", func(v *view.View) bool {
		tp, ok := v.Topic("orders")
		if !ok || len(tp.Partitions) != 3 {
			return false
		}
		for _, p := range tp.Partitions {
			if p.Leader < 0 || p.HighWatermark < 0 {
				return false
			}
		}
		return true
	})
	own = waitOwn(t, pg, "the topic", func(v *view.View) bool { _, ok := v.Topic("orders"); return ok })
	if v.ClusterID != own.ClusterID || v.LeaderID != own.LeaderID || v.LeaderEpoch != own.LeaderEpoch {
		t.Errorf("read cluster %s leader %d epoch %d; the playground says %s, %d, %d", v.ClusterID, v.LeaderID, v.LeaderEpoch, own.ClusterID, own.LeaderID, own.LeaderEpoch)
	}
	ownTopic, _ := own.Topic("orders")
	readTopic, _ := v.Topic("orders")
	for i, p := range readTopic.Partitions {
		if o := ownTopic.Partitions[i]; p.Leader != o.Leader || p.LeaderEpoch != o.LeaderEpoch || p.Summary() != o.Summary() {
			t.Errorf("partition %d read %s; the playground's %s", p.Partition, p.Summary(), o.Summary())
		}
	}
	if len(v.CurrentVoters) != 3 || len(v.CurrentObservers) != 3 {
		t.Errorf("voters %v observers %v", v.CurrentVoters, v.CurrentObservers)
	}
	// The conditions a scenario asserts work on what was read.
	cond, _ := condition.Parse("leader")
	if ok, saw, err := cond.Eval(&v); !ok || err != nil {
		t.Errorf("condition leader: %v %s %v", ok, saw, err)
	}

	old, oldEpoch := v.LeaderID, v.LeaderEpoch
	if _, err := pg.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(old)}); err != nil {
		t.Fatal(err)
	}
	v = refreshUntil(t, c, "a new leader", func(v *view.View) bool { return v.LeaderID > 0 && v.LeaderEpoch > oldEpoch })
	if n, _ := v.Node(old); n.State != view.StateUnreachable {
		t.Errorf("killed controller %d is %s, want unreachable", old, n.State)
	}
	var election *cluster.Event
	for ev := range c.Events(ctx, 0, false) {
		if ev.Kind == cluster.EventElection && ev.Node == v.LeaderID {
			election = &ev
		}
	}
	if election == nil || !election.Inferred || !strings.Contains(election.Message, "→") {
		t.Errorf("election event: %+v", election)
	}
	if _, err := c.Do(ctx, cluster.Action{Kind: cluster.ActKill}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("kill: %v, want ErrReadOnly", err)
	}
}

func TestDialSaysWhatItTried(t *testing.T) {
	_, err := Dial(context.Background(), Config{Bootstrap: []string{"127.0.0.1:1"}, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("error %v, want one naming the address tried", err)
	}
	if _, err := Dial(context.Background(), Config{}); err == nil {
		t.Fatal("no address dialled without error")
	}
	if _, err := Dial(context.Background(), Config{Bootstrap: []string{"localhost"}}); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Fatalf("an address without a port: %v", err)
	}
}

func unfencedBrokers(v *view.View) int {
	n := 0
	for _, node := range v.Nodes {
		if b := node.Broker; b != nil && b.Registered && !b.Fenced {
			n++
		}
	}
	return n
}

func waitOwn(t *testing.T, pg cluster.Operator, what string, cond func(*view.View) bool) view.View {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := pg.Status(context.Background())
		if err == nil && cond(&v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("playground: no %s after 30s (%v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func refreshUntil(t *testing.T, c *Cluster, what string, cond func(*view.View) bool) view.View {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := c.Refresh(context.Background())
		if err == nil && cond(&v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("attached: no %s after 30s (%v)", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
