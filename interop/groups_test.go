package interop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// mainConsumerGroups is kafka-consumer-groups.
const mainConsumerGroups = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"

func groupRecords(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %03d", prefix, i)
	}
	return out
}

// readLines is a console consumer's or kcat's output, sorted.
func readLines(out string) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// Kafka's Java consumer in a group (kafka-console-consumer --group) reads
// every record and commits; run again it reads only what came since;
// kafka-consumer-groups lists and describes the group with no lag; and
// librdkafka's group consumer (kcat -G) starts a group of its own from the
// beginning and, run again, goes on from its committed offsets.
func TestConsumerGroupsOfJavaAndLibrdkafka(t *testing.T) {
	k := needKafka(t)
	kcat := needKcat(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	if _, err := p.Run(context.Background(), "topics", "create", "orders", "--partitions", "3", "--replication-factor", "3"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p)
	bootstrap := strings.Join(p.Brokers, ",")
	first := groupRecords("order", 60)
	// Keyed, so that every partition gets records: librdkafka commits
	// only the partitions it consumed from, and on its next run a
	// partition without a committed offset starts at the end (kcat's
	// auto.offset.reset), as it would against Kafka.
	var keyed strings.Builder
	for i, l := range first {
		fmt.Fprintf(&keyed, "k%d:%s\n", i, l)
	}
	runKcatIn(t, kcat, keyed.String(), "-b", bootstrap, "-P", "-K", ":", "-t", "orders")

	consume := func(n int, extra ...string) []string {
		t.Helper()
		args := append([]string{"--bootstrap-server", bootstrap, "--topic", "orders", "--group", "billing",
			"--max-messages", fmt.Sprint(n), "--timeout-ms", "60000"}, extra...)
		r := runTool(t, k, consoleConsumer, args...)
		if r.Err != nil {
			t.Fatalf("kafka-console-consumer --group: %v", r.Err)
		}
		return readLines(r.Stdout)
	}
	if got := consume(len(first), "--from-beginning"); !slices.Equal(got, first) {
		t.Fatalf("the group read %d records of %d:\n%s", len(got), len(first), strings.Join(got, "\n"))
	}
	second := groupRecords("refund", 20)
	produceWithJava(t, k, bootstrap, "orders", second)
	if got := consume(len(second), "--from-beginning"); !slices.Equal(got, second) {
		t.Fatalf("the group's second run read (want only the %d new records):\n%s", len(second), strings.Join(got, "\n"))
	}

	r := runTool(t, k, mainConsumerGroups, "--bootstrap-server", bootstrap, "--describe", "--group", "billing")
	if r.Err != nil || strings.Count(r.Stdout, "billing ") != 3 {
		t.Fatalf("kafka-consumer-groups --describe: %v\n%s", r.Err, r.Stdout)
	}
	for _, line := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(line); len(f) >= 6 && f[0] == "billing" && f[5] != "0" {
			t.Errorf("lag left: %s", line)
		}
	}
	r = runTool(t, k, mainConsumerGroups, "--bootstrap-server", bootstrap, "--list")
	if r.Err != nil || !strings.Contains(r.Stdout, "billing") {
		t.Fatalf("kafka-consumer-groups --list: %v\n%s", r.Err, r.Stdout)
	}

	all := slices.Sorted(slices.Values(append(slices.Clone(first), second...)))
	got := readLines(runKcat(t, kcat, "-b", bootstrap, "-G", "shipping", "-o", "beginning", "-e", "-q", "orders"))
	if !slices.Equal(got, all) {
		t.Fatalf("kcat -G read %d records of %d", len(got), len(all))
	}
	third := groupRecords("return", 10)
	produceWithJava(t, k, bootstrap, "orders", third)
	got = readLines(runKcat(t, kcat, "-b", bootstrap, "-G", "shipping", "-e", "-q", "orders"))
	if !slices.Equal(got, third) {
		t.Fatalf("kcat -G's second run read (want only the %d new records):\n%s", len(third), strings.Join(got, "\n"))
	}
	checkOffsetsDump(t, k, p, "billing")
}
