package interop

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// backgroundConsumer is a kafka-console-consumer running until the test
// ends, with what it printed.
type backgroundConsumer struct {
	out, errOut *lockedBuffer
}

// startConsoleConsumer starts a console consumer of group g with the
// consumer group protocol (group.protocol=consumer, KIP-848).
func startConsoleConsumer(t *testing.T, k *Kafka, bootstrap, topic, g string) *backgroundConsumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := k.Command(ctx, os.TempDir(), consoleConsumer, "--bootstrap-server", bootstrap, "--topic", topic, "--group", g,
		"--from-beginning", "--command-property", "group.protocol=consumer", "--command-property", "auto.commit.interval.ms=500")
	c := &backgroundConsumer{out: &lockedBuffer{}, errOut: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = c.out, c.errOut
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		t.Logf("console consumer of %s read %d lines; stderr:\n%s", g, len(c.out.lines()), indent(stripSLF4J(c.errOut.String())))
	})
	return c
}

// waitUntil polls cond every half second until it holds or d passes.
func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Kafka 4.4's Java consumer with group.protocol=consumer (KIP-848): two
// console consumers in one group share a topic, each record read once;
// kafka-consumer-groups describes the group (ConsumerGroupDescribe) with
// both members; the group's coordinator is killed, and consumption goes
// on with the new coordinator, each record still read once, until
// kafka-consumer-groups shows no lag.
func TestJavaConsumerGroupProtocol(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	if _, err := p.Run(context.Background(), "topics", "create", "events", "--partitions", "4", "--replication-factor", "3"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p)
	bootstrap := strings.Join(p.Brokers, ",")
	a := startConsoleConsumer(t, k, bootstrap, "events", "watchers")
	b := startConsoleConsumer(t, k, bootstrap, "events", "watchers")

	describe := func(servers string) Result {
		return runTool(t, k, mainConsumerGroups, "--bootstrap-server", servers, "--describe", "--group", "watchers", "--members")
	}
	// members are the group's members with partitions, by id.
	members := func() []string {
		r := describe(bootstrap)
		var ids []string
		for _, line := range strings.Split(r.Stdout, "\n") {
			// GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS
			if f := strings.Fields(line); len(f) >= 5 && f[0] == "watchers" && f[4] != "0" {
				ids = append(ids, f[1])
			}
		}
		slices.Sort(ids)
		return ids
	}
	var ids []string
	waitUntil(t, "two members of group watchers, each with partitions", 90*time.Second, func() bool {
		ids = members()
		return len(ids) == 2
	})
	r := runTool(t, k, mainConsumerGroups, "--bootstrap-server", bootstrap, "--describe", "--group", "watchers", "--state")
	if r.Err != nil || !strings.Contains(r.Stdout, "uniform") || !strings.Contains(r.Stdout, "Stable") {
		t.Errorf("kafka-consumer-groups --describe --state: want the uniform assignor, Stable")
	}
	r = runTool(t, k, mainConsumerGroups, "--bootstrap-server", bootstrap, "--list", "--type", "consumer")
	if r.Err != nil || !strings.Contains(r.Stdout, "watchers") {
		t.Errorf("kafka-consumer-groups --list --type consumer: want watchers")
	}
	// kraftlab's own view of the group: its conditions read consumer
	// groups as they read classic ones.
	for _, cond := range [][]string{{"group-stable", "watchers"}, {"group-members", "watchers", "==", "2"}} {
		if out, err := p.Run(context.Background(), append(append([]string{"wait"}, cond...), "--timeout", "20s")...); err != nil {
			t.Fatalf("wait %v: %v\n%s", cond, err, out)
		}
	}

	read := func() map[string]int {
		got := map[string]int{}
		for _, l := range append(a.out.lines(), b.out.lines()...) {
			got[l]++
		}
		return got
	}
	readAll := func(what string, want []string) {
		t.Helper()
		waitUntil(t, what, 90*time.Second, func() bool {
			got := read()
			for _, v := range want {
				if got[v] == 0 {
					return false
				}
			}
			return true
		})
	}
	// Keyed, so that the records spread over the partitions of both
	// members.
	produceKeyed := func(lines []string) {
		t.Helper()
		keyed := make([]string, len(lines))
		for i, l := range lines {
			keyed[i] = fmt.Sprintf("k%d:%s", i, l)
		}
		produceWithJava(t, k, bootstrap, "events", keyed, "--property", "parse.key=true", "--property", "key.separator=:")
	}
	before := groupRecords("before", 100)
	produceKeyed(before)
	readAll("the records before the kill", before)
	if len(a.out.lines()) == 0 || len(b.out.lines()) == 0 {
		t.Errorf("one consumer read everything: %d and %d", len(a.out.lines()), len(b.out.lines()))
	}

	out, err := p.Run(context.Background(), "kill", "coordinator-of:watchers")
	if err != nil {
		t.Fatalf("kill the coordinator: %v\n%s", err, out)
	}
	t.Logf("kill coordinator-of:watchers: %s", out)
	after := groupRecords("after", 100)
	produceKeyed(after)
	readAll("the records after the kill", after)

	all := append(slices.Clone(before), after...)
	got := read()
	for _, v := range all {
		if got[v] != 1 {
			t.Errorf("%q read %d times", v, got[v])
		}
	}
	for v, n := range got {
		if !slices.Contains(all, v) {
			t.Errorf("read %q (%d times), never produced", v, n)
		}
	}
	if out, err := p.Run(context.Background(), "wait", "group-lag", "watchers", "==", "0", "--timeout", "30s"); err != nil {
		t.Errorf("wait group-lag watchers == 0: %v\n%s", err, out)
	}
	if got := members(); !slices.Equal(got, ids) {
		t.Errorf("members after the kill %v; before %v", got, ids)
	}
	waitUntil(t, "no lag left in group watchers", 60*time.Second, func() bool {
		r := runTool(t, k, mainConsumerGroups, "--bootstrap-server", bootstrap, "--describe", "--group", "watchers")
		rows, lagging := 0, 0
		for _, line := range strings.Split(r.Stdout, "\n") {
			// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID
			if f := strings.Fields(line); len(f) >= 7 && f[0] == "watchers" && f[1] == "events" {
				rows++
				if f[5] != "0" || f[6] == "-" {
					lagging++
				}
			}
		}
		return r.Err == nil && rows == 4 && lagging == 0
	})
}
