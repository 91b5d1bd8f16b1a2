package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// truncationRepro runs the test of an old leader's truncation, which the
// engine does not pass yet.

// On the real engine: 50 records produced with acks=all come back from
// the beginning, every replica's log ends at the high watermark of 50, and
// each follower's fetcher thread has caught up.
func TestProduceConsumeOnTheRealEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real playground")
	}
	h := newHarness(t)
	h.serveReal("default", 3, 3)
	code, out, errOut := h.run("wait", "unfenced", "101", "--timeout", "30s")
	expectRun(t, "wait unfenced", code, out, errOut, ExitOK)
	for _, b := range []string{"102", "103"} {
		code, out, errOut = h.run("wait", "unfenced", b, "--timeout", "30s")
		expectRun(t, "wait unfenced "+b, code, out, errOut, ExitOK)
	}
	code, out, errOut = h.run("topics", "create", "orders", "--partitions", "1", "--replication-factor", "3")
	expectRun(t, "topics create", code, out, errOut, ExitOK)
	code, out, errOut = h.run("wait", "topic", "orders", "on", "all", "brokers", "--timeout", "30s")
	expectRun(t, "wait topic", code, out, errOut, ExitOK)

	code, out, errOut = h.run("produce", "orders", "--count", "50", "--acks", "all", "--size", "20")
	expectRun(t, "produce --count 50", code, out, errOut, ExitOK, "produced 50 records of 20 B to orders with acks=all", "partition 0: 50 records, offsets 0..49")

	code, out, errOut = h.run("consume", "orders", "--from-beginning", "--max", "50", "--json", "--timeout", "10s")
	expectRun(t, "consume --from-beginning", code, out, errOut, ExitOK)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 50 {
		t.Fatalf("consume: %d records, want 50:\n%s\n%s", len(lines), out, errOut)
	}
	for i, l := range lines {
		var r consumedRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Offset != int64(i) || !strings.HasPrefix(r.Value, "record-") || len(r.Value) != 20 {
			t.Fatalf("record %d: %v %+v", i, err, r)
		}
	}

	code, out, errOut = h.run("wait", "in-sync", "orders-0", "--timeout", "30s")
	// The replicas come in the order the controller placed them.
	expectRun(t, "wait in-sync", code, out, errOut, ExitOK, "hwm 50, log ends ", "101:50", "102:50", "103:50")
	code, out, errOut = h.run("expect", "hwm", "orders-0", "==", "50")
	expectRun(t, "expect hwm", code, out, errOut, ExitOK)
	code, out, errOut = h.run("topics", "describe", "orders")
	expectRun(t, "topics describe", code, out, errOut, ExitOK)
	if !regexp.MustCompile(`(?m)^orders  0 .* 50  +(10[123]:50 ){2}10[123]:50$`).MatchString(out) {
		t.Errorf("topics describe: want a high watermark of 50 and every replica at 50:\n%s", out)
	}

	// The leader's followers fetch from it; their threads have caught up.
	var leader string
	for _, b := range []string{"101", "102", "103"} {
		if c, _, _ := h.run("expect", "partition-leader", "orders-0", "==", b); c == ExitOK {
			leader = b
		}
	}
	for _, b := range []string{"101", "102", "103"} {
		if b == leader {
			continue
		}
		code, out, errOut = h.run("wait", "fetcher-lag", b, "==", "0", "--timeout", "30s")
		expectRun(t, "wait fetcher-lag "+b, code, out, errOut, ExitOK)
		code, out, errOut = h.run("fetchers", b)
		expectRun(t, "fetchers "+b, code, out, errOut, ExitOK, "ReplicaFetcherThread-0-"+leader+" from broker "+leader, "orders-0   Fetching  50")
	}
	code, out, errOut = h.run("fetchers", leader)
	expectRun(t, "fetchers on the leader", code, out, errOut, ExitOK, "no fetcher threads: it follows no partition")

	// A group reads 20, commits them, and its next member goes on from 20 (after the
	// fetcher checks: the group's __consumer_offsets has followers too).
	code, out, errOut = h.run("consume", "orders", "--group", "billing", "--from-beginning", "--max", "20", "--json", "--timeout", "10s")
	expectRun(t, "consume --group", code, out, errOut, ExitOK)
	if first := strings.Split(strings.TrimSpace(out), "\n"); len(first) != 20 || !strings.Contains(first[0], `"offset":0,`) {
		t.Fatalf("consume --group: %d records:\n%s", len(first), out)
	}
	code, out, errOut = h.run("consume", "orders", "--group", "billing", "--from-beginning", "--max", "30", "--json", "--timeout", "10s")
	expectRun(t, "consume --group again", code, out, errOut, ExitOK)
	if rest := strings.Split(strings.TrimSpace(out), "\n"); len(rest) != 30 || !strings.Contains(rest[0], `"offset":20,`) {
		t.Fatalf("consume --group again: want offsets 20..49, got %d records:\n%s", len(rest), out)
	}
	// The group, empty now, with everything it read committed: no lag.
	code, out, errOut = h.run("groups", "billing")
	expectRun(t, "groups billing", code, out, errOut, ExitOK)
	if !strings.Contains(out, "group billing: Empty") || !regexp.MustCompile(`orders-0 +50 +50 +0`).MatchString(out) {
		t.Fatalf("groups billing:\n%s", out)
	}
	// A group of the consumer protocol (KIP-848): the coordinator assigns,
	// and groups describes it with ConsumerGroupDescribe.
	code, out, errOut = h.run("consume", "orders", "--group", "audit", "--group-protocol", "consumer", "--from-beginning", "--max", "50", "--json", "--timeout", "10s")
	expectRun(t, "consume --group-protocol consumer", code, out, errOut, ExitOK)
	if all := strings.Split(strings.TrimSpace(out), "\n"); len(all) != 50 {
		t.Fatalf("consume --group-protocol consumer: %d records:\n%s", len(all), out)
	}
	code, out, errOut = h.run("groups", "audit", "billing")
	expectRun(t, "groups audit billing", code, out, errOut, ExitOK, "group audit: Empty, consumer protocol, assignor uniform", "group billing: Empty, protocol -")
	if !regexp.MustCompile(`orders-0 +50 +50 +0`).MatchString(out) {
		t.Fatalf("groups audit billing:\n%s", out)
	}
	code, out, errOut = h.run("consume", "orders", "--group-protocol", "eager")
	expectRun(t, "consume --group-protocol eager", code, out, errOut, ExitUsage, `--group-protocol must be classic or consumer, got "eager"`)
}

// A topic whose min.insync.replicas the ISR no longer meets refuses
// acks=all with NOT_ENOUGH_REPLICAS, which produce shows by name (exit 1);
// acks=1 still goes through.
func TestProduceShowsNotEnoughReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real playground")
	}
	h := newHarness(t)
	pg := h.serveReal("default", 3, 2)
	for _, b := range []string{"101", "102"} {
		code, out, errOut := h.run("wait", "unfenced", b, "--timeout", "30s")
		expectRun(t, "wait unfenced "+b, code, out, errOut, ExitOK)
	}
	// topics create takes no configs: a Kafka client sets this one.
	var seeds []string
	for _, n := range pg.View().Nodes {
		if n.Kind == view.KindBroker {
			seeds = append(seeds, n.Listener)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	minISR := "2"
	resp, err := kadm.NewClient(cl).CreateTopic(testContext(t), 1, 2, map[string]*string{"min.insync.replicas": &minISR}, "strict")
	cl.Close()
	if err != nil || resp.Err != nil {
		t.Fatalf("create strict: %v %v", err, resp.Err)
	}
	code, out, errOut := h.run("wait", "in-sync", "strict-0", "--timeout", "30s")
	expectRun(t, "wait in-sync", code, out, errOut, ExitOK)

	var follower string
	for _, b := range []string{"101", "102"} {
		if c, _, _ := h.run("expect", "partition-leader", "strict-0", "!=", b); c == ExitOK {
			follower = b
		}
	}
	code, out, errOut = h.run("kill", follower)
	expectRun(t, "kill the follower", code, out, errOut, ExitOK)
	code, out, errOut = h.run("wait", "isr", "strict-0", "size", "==", "1", "--timeout", "30s")
	expectRun(t, "wait the ISR to shrink", code, out, errOut, ExitOK)

	code, out, errOut = h.run("produce", "strict", "--count", "1")
	expectRun(t, "produce acks=all", code, out, errOut, ExitFailed, "produce to strict refused: NOT_ENOUGH_REPLICAS: the ISR is smaller than min.insync.replicas, so acks=all cannot be met")
	code, out, errOut = h.run("produce", "strict", "--count", "1", "--expect-error", "NOT_ENOUGH_REPLICAS")
	expectRun(t, "produce --expect-error", code, out, errOut, ExitOK, "refused as expected: NOT_ENOUGH_REPLICAS")
	code, out, errOut = h.run("produce", "strict", "--count", "1", "--acks", "1")
	expectRun(t, "produce acks=1", code, out, errOut, ExitOK, "partition 0: 1 records, offsets 0..0")
	code, out, errOut = h.run("produce", "strict", "--count", "1", "--acks", "1", "--expect-error", "NOT_ENOUGH_REPLICAS")
	expectRun(t, "produce --expect-error that is written", code, out, errOut, ExitFailed, "all 1 records were written, but --expect-error wanted them refused with NOT_ENOUGH_REPLICAS")
	code, out, errOut = h.run("produce", "strict", "--count", "1", "--expect-error", "NOT_A_KAFKA_ERROR")
	expectRun(t, "produce --expect-error unknown", code, out, errOut, ExitUsage, `bad --expect-error "NOT_A_KAFKA_ERROR"`)
}

// produce and consume refuse bad flags, unknown topics and partitions with
// one line, before they dial a broker.
func TestProduceConsumeRefuseBadInput(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("topics", "create", "orders", "--partitions", "2")
	expectRun(t, "topics create", code, out, errOut, ExitOK)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"produce"}, "produce takes one TOPIC, got nothing"},
		{[]string{"produce", "orders", "--acks", "most"}, `bad --acks "most": want all, 1 or 0`},
		{[]string{"produce", "orders", "--size", "10"}, "--size sizes the records of --count"},
		{[]string{"produce", "orders", "--count", "-1"}, "--count must be between 1 and 1000000, got -1"},
		{[]string{"produce", "orders", "--count", "1", "--size", "2000000"}, "--size must be between 0 and 1.0 MiB"},
		{[]string{"produce", "orders", "--partition", "-2"}, "--partition must be 0 or more"},
		{[]string{"produce", "nope", "--count", "1"}, `no topic "nope"; the topics are: orders`},
		{[]string{"produce", "orders", "--count", "1", "--partition", "2"}, "topic orders has partitions 0..1, not 2"},
		{[]string{"consume", "orders", "--from-beginning", "--offset", "3"}, "--from-beginning and --offset both say where to start"},
		{[]string{"consume", "orders", "--offset", "-3"}, "--offset must be 0 or more"},
		{[]string{"consume", "orders", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"consume", "orders", "--max", "-1"}, "--max must be 0 (no limit) or more"},
		{[]string{"consume", "orders", "--group", "g", "--partition", "0"}, "drop --partition and --offset"},
		{[]string{"consume", "nope"}, `no topic "nope"`},
	} {
		code, out, errOut := h.run(tc.args...)
		expectRun(t, strings.Join(tc.args, " "), code, out, errOut, ExitUsage, tc.want)
	}
}

// In a scenario, produce takes --count (a line has no stdin), and
// consume --max is a fine line.
func TestProduceAndConsumeAsScenarioLines(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(good, []byte("topics create orders\nproduce orders --count 50 --acks all\nconsume orders --from-beginning --max 50\nwait hwm orders-0 == 50\nwait in-sync orders-0\nwait fetcher-lag 101 == 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("produce orders\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := h.run("scenario", "check", good)
	expectRun(t, "scenario check good", code, out, errOut, ExitOK)
	code, out, errOut = h.run("scenario", "check", bad)
	expectRun(t, "scenario check bad", code, out, errOut, ExitUsage, "bad.txt:1", "in a scenario, produce needs --count N")
}

// On the real engine, the data-plane conditions follow a follower that
// is killed and leaves the ISR while records are produced, then returns,
// catches up from its fetcher and rejoins.
func TestFollowerLeavesAndRejoinsTheISR(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real playground")
	}
	h, step := realOrders(t)
	step(ExitOK, "produce", "orders", "--count", "50")
	step(ExitOK, "wait", "in-sync", "orders-0", "--timeout", "30s")
	follower := ""
	for _, b := range []string{"101", "102", "103"} {
		if c, _, _ := h.run("expect", "partition-leader", "orders-0", "!=", b); c == ExitOK {
			follower = b
		}
	}

	step(ExitOK, "kill", follower)
	step(ExitOK, "wait", "isr", "orders-0", "size", "==", "2", "--timeout", "30s")
	step(ExitOK, "produce", "orders", "--count", "50")
	step(ExitOK, "expect", "hwm", "orders-0", "==", "100")
	step(ExitOK, "expect", "log-end", "orders-0", follower, "<", "0") // not hosted: its broker is down
	step(ExitFailed, "expect", "in-sync", "orders-0")

	step(ExitOK, "start", follower)
	out := step(ExitOK, "wait", "in-sync", "orders-0", "--timeout", "30s")
	if !strings.Contains(out, "hwm 100") {
		t.Errorf("in-sync with the high watermark elsewhere: %s", out)
	}
	step(ExitOK, "expect", "log-end", "orders-0", follower, "==", "100")
	step(ExitOK, "wait", "fetcher-lag", follower, "==", "0", "--timeout", "30s")
}

// An old leader that wrote records with acks=1 no follower fetched, and
// lost its leadership, cuts them off when it returns as a follower: its
// fetcher truncates to where its log agrees with the new leader's, and it
// rejoins the ISR.
func TestOldLeaderTruncatesWhenItReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real playground")
	}
	h, step := realOrders(t)
	var leader string
	var followers []string
	for _, b := range []string{"101", "102", "103"} {
		if c, _, _ := h.run("expect", "partition-leader", "orders-0", "==", b); c == ExitOK {
			leader = b
		} else {
			followers = append(followers, b)
		}
	}
	for _, f := range followers {
		step(ExitOK, "partition", leader, f)
	}
	step(ExitOK, "produce", "orders", "--count", "10", "--acks", "1")
	step(ExitOK, "expect", "log-end", "orders-0", leader, "==", "10")
	step(ExitOK, "stop", leader)
	step(ExitOK, "wait", "partition-leader", "orders-0", "!=", leader, "--timeout", "30s")
	step(ExitOK, "heal")
	step(ExitOK, "start", leader)
	step(ExitOK, "wait", "truncations", "orders-0", leader, ">=", "1", "--timeout", "30s")
	step(ExitOK, "wait", "in-sync", "orders-0", "--timeout", "30s")
	step(ExitOK, "expect", "log-end", "orders-0", leader, "==", "0")
}

// realOrders starts a real playground of 3 controllers and 3 brokers with
// topic orders (1 partition, 3 replicas) in sync, and returns a step that
// runs a command and expects its exit code.
func realOrders(t *testing.T) (*harness, func(want int, args ...string) string) {
	t.Helper()
	h := newHarness(t)
	h.serveReal("default", 3, 3)
	step := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := h.run(args...)
		expectRun(t, strings.Join(args, " "), code, out, errOut, want)
		return out
	}
	for _, b := range []string{"101", "102", "103"} {
		step(ExitOK, "wait", "unfenced", b, "--timeout", "30s")
	}
	step(ExitOK, "topics", "create", "orders", "--partitions", "1", "--replication-factor", "3")
	step(ExitOK, "wait", "in-sync", "orders-0", "--timeout", "30s")
	return h, step
}
