package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mainConsoleProducer is kafka-console-producer.
const mainConsoleProducer = "org.apache.kafka.tools.ConsoleProducer"

// TestIdempotentProducersFromKafkaAndLibrdkafka: Kafka's own console
// producer and librdkafka (kcat), both with enable.idempotence=true and
// acks=all, get producer ids from kraftlab's brokers (InitProducerId) and
// produce to a topic replicated three times; every record is read back
// once, and the controller's ProducerIdsRecords show in the image.
func TestIdempotentProducersFromKafkaAndLibrdkafka(t *testing.T) {
	k := needKafka(t)
	bin := needKcat(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	if _, err := p.Run(context.Background(), "topics", "create", "idem", "--partitions", "3", "--replication-factor", "3"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p)

	var sent []string
	for i := range 30 {
		sent = append(sent, fmt.Sprintf("java-%02d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := k.Command(ctx, os.TempDir(), mainConsoleProducer, "--bootstrap-server", strings.Join(p.Brokers, ","), "--topic", "idem",
		"--command-property", "enable.idempotence=true", "--command-property", "acks=all")
	cmd.Stdin = strings.NewReader(strings.Join(sent, "\n") + "\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	t.Logf("$ java %s  (%v)\n%s%s", mainConsoleProducer, err, indent(out.String()), indent(stripSLF4J(errOut.String())))
	if err != nil || strings.Contains(errOut.String(), "ERROR") {
		t.Fatalf("kafka-console-producer with idempotence: %v", err)
	}

	var kc []string
	for i := range 30 {
		kc = append(kc, fmt.Sprintf("kcat-%02d", i))
	}
	runKcatIn(t, bin, strings.Join(kc, "\n")+"\n", "-b", strings.Join(p.Brokers, ","), "-P", "-t", "idem",
		"-X", "enable.idempotence=true", "-X", "acks=all")
	sent = append(sent, kc...)

	got := strings.Fields(runKcat(t, bin, "-b", p.Brokers[1], "-C", "-t", "idem", "-o", "beginning", "-e", "-q", "-f", "%s\n"))
	slices.Sort(got)
	slices.Sort(sent)
	if !slices.Equal(got, sent) {
		t.Fatalf("read %d records %q, sent %d", len(got), got, len(sent))
	}

	next, err := p.Run(context.Background(), "metadata", "/image/producerIds/nextProducerId")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(next), 10, 64); err != nil || n < 1000 || n%1000 != 0 {
		t.Fatalf("/image/producerIds/nextProducerId = %q, want a whole number of blocks of 1000", next)
	}
	t.Logf("next producer id after both producers: %s", strings.TrimSpace(next))
}
