package engine_test

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The real engine's view of the metadata: brokers register and are
// unfenced, a topic reaches every broker, the active controller counts
// them, and an isolated broker is fenced with its leaderships moved and
// the fencing counted, while the event log tells each step.
func TestRealEngineMetadataView(t *testing.T) {
	p := openReal(t, 3, 3, "")
	for _, b := range []string{"101", "102", "103"} {
		waitCond(t, p, "unfenced "+b)
		waitCond(t, p, "broker "+b+" state RUNNING")
	}
	do(t, p, cluster.Action{Kind: cluster.ActCreateTopic, Topic: "orders", Partitions: 3, ReplicationFactor: 3})
	v := waitCond(t, p, "topic orders on all brokers")
	tp, _ := v.Topic("orders")
	if len(tp.Partitions) != 3 || len(tp.Partitions[0].Isr) != 3 || tp.ID == "" {
		t.Fatalf("orders = %+v", tp)
	}
	waitCond(t, p, "caught-up")
	var active *view.ControllerMetrics
	for _, n := range p.View().Nodes {
		if m := n.ControllerMetrics; m != nil && m.ActiveControllerCount == 1 {
			active = m
		}
	}
	if active == nil || active.ActiveBrokerCount != 3 || active.GlobalTopicCount != 1 || active.GlobalPartitionCount != 3 {
		t.Fatalf("active controller metrics %+v", active)
	}

	act(t, p, "isolate 101")
	waitCond(t, p, "fenced 101")
	for _, part := range []string{"orders-0", "orders-1", "orders-2"} {
		waitCond(t, p, "partition-leader "+part+" != 101")
		waitCond(t, p, "isr "+part+" size == 2")
	}
	var evs []string
	for _, ev := range p.EventStream().Since(0) {
		evs = append(evs, string(ev.Kind)+" "+ev.Message)
	}
	log := strings.Join(evs, "\n")
	for _, want := range []string{"controller-activated", "broker-registered", "broker-unfenced", "topic-applied", "broker-fenced"} {
		if !strings.Contains(log, want) {
			t.Errorf("the event log lacks %s:\n%s", want, log)
		}
	}
	act(t, p, "heal")
	waitCond(t, p, "unfenced 101")
	waitCond(t, p, "metadata-lag 101 == 0")
}
