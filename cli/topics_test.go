package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// topics create, list, describe and delete go through the control API;
// the model places replicas and refuses what Kafka refuses.
func TestTopicsCommands(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})

	code, out, errOut := h.run("topics", "list")
	expectRun(t, "topics list (none)", code, out, errOut, ExitOK, "no topics yet: kraftlab topics create NAME")
	code, out, errOut = h.run("topics", "create", "orders", "--partitions", "2")
	expectRun(t, "topics create", code, out, errOut, ExitOK, "topic orders created: 2 partitions, replication factor 1")
	code, out, errOut = h.run("topics", "create", "orders")
	expectRun(t, "topics create twice", code, out, errOut, ExitUsage, "TOPIC_ALREADY_EXISTS")
	code, out, errOut = h.run("topics", "create", "big", "--replication-factor", "3")
	expectRun(t, "topics create RF 3 on one broker", code, out, errOut, ExitUsage, "INVALID_REPLICATION_FACTOR")
	code, out, errOut = h.run("topics", "create", "zero", "--partitions", "0")
	expectRun(t, "topics create 0 partitions", code, out, errOut, ExitUsage, "--partitions and --replication-factor must be at least 1")
	code, out, errOut = h.run("topics", "create")
	expectRun(t, "topics create without a name", code, out, errOut, ExitUsage, "kraftlab topics create takes one topic NAME, got nothing")

	code, out, errOut = h.run("topics", "list")
	expectRun(t, "topics list", code, out, errOut, ExitOK, "TOPIC", "orders", "101")
	code, out, errOut = h.run("topics", "describe", "orders")
	expectRun(t, "topics describe", code, out, errOut, ExitOK, "TOPIC   PARTITION  LEADER  EPOCH  ISR  ELR  LAST KNOWN ELR  HWM  REPLICAS (BROKER:LOG END)", "orders  1          101     0      101  -    -               0    101:0")
	code, out, errOut = h.run("topics", "describe", "nope")
	expectRun(t, "topics describe unknown", code, out, errOut, ExitUsage, `no topic "nope"; the topics are: orders`)
	code, out, errOut = h.run("topics", "describe", "--json")
	expectRun(t, "topics describe --json", code, out, errOut, ExitOK)
	var topics []view.Topic
	if err := json.Unmarshal([]byte(out), &topics); err != nil || len(topics) != 1 || len(topics[0].Partitions) != 2 {
		t.Fatalf("topics describe --json: %v %s", err, out)
	}
	// The data plane's fields come with the view's.
	if p := topics[0].Partitions[0]; p.HighWatermark != 0 || len(p.ReplicaStates) != 1 || !p.ReplicaStates[0].Hosted || !p.ReplicaStates[0].Leading {
		t.Fatalf("topics describe --json lacks the high watermark or the replicas: %s", out)
	}
	for _, name := range []string{`"highWatermark"`, `"replicaStates"`, `"logEndOffset"`, `"leaderLogEndOffset"`} {
		if !strings.Contains(out, name) {
			t.Errorf("topics describe --json lacks %s", name)
		}
	}

	// An unknown topic or partition is a mistake to expect (exit 2, as an
	// unknown node is); a wait waits for it to be created.
	code, out, errOut = h.run("expect", "in-sync", "orders-7")
	expectRun(t, "expect in-sync orders-7", code, out, errOut, ExitUsage, "kraftlab: expect in-sync orders-7: unknown partition orders-7 (topic orders has partitions 0..1); list them with: kraftlab topics")
	code, out, errOut = h.run("expect", "in-sync", "ordres-0")
	expectRun(t, "expect in-sync ordres-0", code, out, errOut, ExitUsage, `kraftlab: expect in-sync ordres-0: unknown topic "ordres" (topics: orders); list them with: kraftlab topics`)
	code, out, errOut = h.run("wait", "in-sync", "later-0", "--timeout", "200ms")
	expectRun(t, "wait in-sync later-0", code, out, errOut, ExitFailed, `kraftlab: wait in-sync later-0: still false after 200ms; last saw: unknown topic "later" (topics: orders)`)

	code, out, errOut = h.run("wait", "partition-leader", "orders-0", "==", "101", "--timeout", "5s")
	expectRun(t, "wait partition-leader", code, out, errOut, ExitOK)
	code, out, errOut = h.run("topics", "delete", "orders")
	expectRun(t, "topics delete", code, out, errOut, ExitOK, "topic orders deleted")
	code, out, errOut = h.run("topics", "delete", "orders")
	expectRun(t, "topics delete twice", code, out, errOut, ExitUsage, "UNKNOWN_TOPIC_OR_PARTITION")
}

func TestBrokersCommand(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("brokers")
	// LAG is labelled kraftlab's own measure, beside Kafka's
	// last-applied-record-lag-ms, with what Kafka fences on.
	expectRun(t, "brokers", code, out, errOut, ExitOK, "BROKER  LISTENER         NODE     STATE    FENCED  EPOCH  LAG*  APPLIED-LAG-MS  HEARTBEAT", "101     127.0.0.1:19101  running  RUNNING  false",
		"* LAG is kraftlab's own measure", "Kafka fences a broker only for a missed session (broker.session.timeout.ms), never for lag",
		"active controller 1 (kafka.controller:type=KafkaController): ActiveBrokerCount 1, FencedBrokerCount 0")
	code, out, errOut = h.run("kill", "101")
	expectRun(t, "kill 101", code, out, errOut, ExitOK)
	code, out, errOut = h.run("expect", "fenced", "101")
	expectRun(t, "expect fenced", code, out, errOut, ExitOK)
	code, out, errOut = h.run("brokers", "--json")
	expectRun(t, "brokers --json", code, out, errOut, ExitOK)
	var rows []brokerRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || !rows[0].Fenced || rows[0].Node != view.StateKilled {
		t.Fatalf("brokers --json: %v %s", err, out)
	}
}
