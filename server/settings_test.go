package server

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// The listener settings reach each kind of node: brokers read Produce up
// to socket.request.max.bytes, controllers their own cap; Kafka's 0 for
// "unbounded" and "no delay" becomes the wire's negative.
func TestListenerBoundsPerKind(t *testing.T) {
	st := DefaultSettings()
	b := Config{Kind: Broker, Settings: st}.listenerBounds()
	c := Config{Kind: Controller, Settings: st}.listenerBounds()
	if b.MaxFrameSize != 100<<20 || c.MaxFrameSize != 1<<20 {
		t.Errorf("frame caps: broker %d, controller %d", b.MaxFrameSize, c.MaxFrameSize)
	}
	if b.MaxConnections != 1024 || b.IdleTimeout != 10*time.Minute || b.FailedAuthenticationDelay != 100*time.Millisecond ||
		b.SaslMaxReceiveSize != 512<<10 || b.AuthenticationTimeout != 10*time.Second || b.QueuedMaxRequestBytes != 32<<20 {
		t.Errorf("broker listener %+v", b)
	}
	st.QueuedMaxRequestBytes, st.FailedAuthenticationDelay = 0, 0
	cfg, err := st.NodeConfig(101, []int32{1}, "c", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if b := cfg.listenerBounds(); b.QueuedMaxRequestBytes >= 0 || b.FailedAuthenticationDelay >= 0 {
		t.Errorf("Kafka's 0 (unbounded, no delay) became %+v", b)
	}
}

// kraftlab.quorum.replication reaches every node's quorum configuration,
// brokers' included, and push takes fetch.max.wait.ms as its heartbeat.
func TestReplicationSetting(t *testing.T) {
	st := DefaultSettings()
	if v, _ := st.Get("kraftlab.quorum.replication"); v != "pull" {
		t.Fatalf("default replication %q, want pull (Kafka's)", v)
	}
	if err := st.Apply([]string{"kraftlab.quorum.replication=push", "kraftlab.quorum.fetch.max.wait.ms=50"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{1, 101} {
		cfg, err := st.NodeConfig(id, []int32{1}, "c", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if rc := cfg.Raft.Raft; rc.Replication != raft.Push || rc.HeartbeatInterval != 50*time.Millisecond {
			t.Errorf("node %d: replication %v, heartbeat %v", id, rc.Replication, rc.HeartbeatInterval)
		}
	}
	if err := st.Set("kraftlab.quorum.fetch.max.wait.ms", "0"); err != nil {
		t.Fatal(err)
	}
	if err := st.Validate(); err == nil || !strings.Contains(err.Error(), "heartbeat") {
		t.Errorf("push with no heartbeat interval: %v", err)
	}
	if err := st.Set("kraftlab.quorum.replication", "gossip"); err == nil {
		t.Error("kraftlab.quorum.replication=gossip accepted")
	}
}
