package interop

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Kafka's own console tools, the Java producer and consumer underneath,
// against kraftlab's brokers.
const (
	consoleProducer = "org.apache.kafka.tools.ConsoleProducer"
	consoleConsumer = "org.apache.kafka.tools.consumer.ConsoleConsumer"
)

// javaProducerProperties are the Java producer's settings for the tests:
// acks=all, and idempotence, the Java client's default, stated anyway.
var javaProducerProperties = []string{"--producer-property", "acks=all", "--producer-property", "enable.idempotence=true"}

// produceWithJava sends lines, one record each, through
// kafka-console-producer (with the extra arguments) and returns once the
// tool has closed its producer (which waits for every acknowledgement).
func produceWithJava(t *testing.T, k *Kafka, bootstrap, topic string, lines []string, extra ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(append([]string{"--bootstrap-server", bootstrap, "--topic", topic}, javaProducerProperties...), extra...)
	cmd := k.Command(ctx, t.TempDir(), consoleProducer, args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	t.Logf("$ kafka-console-producer %s  (%.1fs, %v)\n%s%s", strings.Join(args, " "), time.Since(start).Seconds(), err, indent(out.String()), indent(lastLines(stripSLF4J(errOut.String()), 30)))
	if err != nil || strings.Contains(errOut.String(), "ERROR") {
		t.Fatalf("kafka-console-producer: %v", err)
	}
}

// Kafka's Java producer (acks=all) and consumer, through Kafka's console
// tools: records produced before and after the partition leader's broker
// is killed are all read back from the beginning, each exactly once.
func TestJavaClientsProduceConsumeAcrossLeaderKill(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	if _, err := p.Run(context.Background(), "topics", "create", "payments", "--partitions", "1", "--replication-factor", "3"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p)
	if _, err := p.Run(context.Background(), "wait", "isr", "payments-0", "size", "==", "3", "--timeout", "20s"); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for i := range 100 {
		sent = append(sent, fmt.Sprintf("payment %03d", i))
	}
	produceWithJava(t, k, strings.Join(p.Brokers, ","), "payments", sent)

	leader := kraftlabTopics(t, p, "payments")[0].Partitions[0].Leader
	if _, err := p.Run(context.Background(), "kill", strconv.Itoa(int(leader))); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), "wait", "partition-leader", "payments-0", "!=", strconv.Itoa(int(leader)), "--timeout", "20s"); err != nil {
		dumpPlayground(t, p)
		t.Fatal(err)
	}
	var alive []string
	for i, addr := range p.Brokers {
		if int32(101+i) != leader {
			alive = append(alive, addr)
		}
	}
	var more []string
	for i := 100; i < 200; i++ {
		more = append(more, fmt.Sprintf("payment %03d", i))
	}
	produceWithJava(t, k, strings.Join(alive, ","), "payments", more)
	sent = append(sent, more...)

	// --partition with no --group: the consumer is assigned the partition
	// and needs no group coordinator, which kraftlab's brokers do not run.
	r := runTool(t, k, consoleConsumer, "--bootstrap-server", strings.Join(alive, ","), "--topic", "payments",
		"--partition", "0", "--offset", "earliest", "--max-messages", strconv.Itoa(len(sent)), "--timeout-ms", "30000")
	if r.Err != nil {
		t.Fatalf("kafka-console-consumer: %v", r.Err)
	}
	read := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	slices.Sort(read)
	if !slices.Equal(read, sent) {
		t.Fatalf("kafka-console-consumer read %d records, %d were produced and acknowledged:\n%s", len(read), len(sent), strings.Join(read, "\n"))
	}
}
