package engine

import (
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/server"
)

// The lifecycle states mean what Kafka's BrokerLifecycleManager means by
// them: STARTING lasts until a heartbeat answer says the broker caught up
// (isCaughtUp: its metadata offset reached its own registration), RECOVERY
// is caught up and still fenced, RUNNING is unfenced. Catching up belongs
// to STARTING, not to RECOVERY.
func TestLifecycleWordsAreKafkas(t *testing.T) {
	words := func(s server.BrokerState) string {
		t.Helper()
		msg, ok := narrateLifecycle(server.LifecycleEvent{Kind: server.EventStateChanged, State: s})
		if !ok {
			t.Fatalf("%v not told", s)
		}
		return msg
	}
	starting, recovery, running := words(server.BrokerStarting), words(server.BrokerRecovery), words(server.BrokerRunning)
	if !strings.HasPrefix(starting, "is STARTING") || !strings.Contains(starting, "replays the metadata log") || !strings.Contains(starting, "caught up to its own registration") {
		t.Errorf("STARTING: %q, want it to say the broker replays the metadata log until caught up to its registration", starting)
	}
	if !strings.HasPrefix(recovery, "is RECOVERY") || strings.Contains(recovery, "catching up") ||
		!strings.Contains(recovery, "caught up") || !strings.Contains(recovery, "still fenced") {
		t.Errorf("RECOVERY: %q, want caught up and still fenced, not catching up", recovery)
	}
	if !strings.HasPrefix(running, "is RUNNING") || !strings.Contains(running, "unfenced") || strings.Contains(running, "caught up") {
		t.Errorf("RUNNING: %q, want unfenced, with no claim that catching up unfenced it", running)
	}
	if _, ok := narrateLifecycle(server.LifecycleEvent{Kind: server.EventRegistered}); ok {
		t.Error("the registration is told twice: it is the controller's event")
	}
	// SHUTTING_DOWN credits the controller only when its answer let the
	// broker go; one that gave up on its controlled shutdown went alone.
	let, _ := narrateLifecycle(server.LifecycleEvent{Kind: server.EventStateChanged, State: server.BrokerShuttingDown, Controller: 1})
	alone, _ := narrateLifecycle(server.LifecycleEvent{Kind: server.EventStateChanged, State: server.BrokerShuttingDown, Controller: -1})
	if !strings.Contains(let, "the controller let it go") || strings.Contains(alone, "let it go") || !strings.Contains(alone, "without a controller's answer") {
		t.Errorf("SHUTTING_DOWN: %q with a controller's answer, %q without", let, alone)
	}
}

// A broker is unfenced when its heartbeat's metadata offset reaches its
// own registration record's (Kafka's
// BrokerHeartbeatManager.calculateNextBrokerState), not when it has caught
// up with the log: the words say which offsets were compared.
func TestUnfencedWordsNameTheRegistration(t *testing.T) {
	kind, node, msg, ok := narrateController(1, controller.Event{Kind: controller.EventBrokerUnfenced, Broker: 101, BrokerEpoch: 12,
		MetadataOffset: 40, RegistrationOffset: 12})
	if !ok || kind != cluster.EventBrokerUnfenced || node != 101 {
		t.Fatalf("kind %v node %d ok %v", kind, node, ok)
	}
	for _, want := range []string{"unfenced by controller 1", "offset 40", "registration record (offset 12)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "caught up with the metadata log") {
		t.Errorf("%q says catching up with the log unfenced it", msg)
	}
}

// A follower's truncation is told in the event log, as Kafka's fetcher
// logs it (AbstractFetcherThread: "Truncating partition ..."). The records
// it drops are those the leader's log lacks; other replicas may hold them
// too (a follower that fetched them from the old leader), so the words do
// not say only it had them.
func TestReplicaTruncatedWords(t *testing.T) {
	msg := narrateReplicaTruncated("orders-0", server.ReplicaEvent{Kind: server.ReplicaTruncated, Leader: 102, TruncatedFrom: 100, LogEndOffset: 90})
	want := "truncated its replica of orders-0 from log end 100 to 90, where it agrees with leader 102's log: it drops 10 records the leader's log does not have"
	if !strings.HasPrefix(msg, want) {
		t.Errorf("%q, want it to start %q", msg, want)
	}
	if strings.Contains(msg, "only it had") {
		t.Errorf("%q says only this replica had the records", msg)
	}
}
