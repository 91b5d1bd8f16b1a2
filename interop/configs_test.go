package interop

import (
	"context"
	"strings"
	"testing"
)

// kafka-configs sets and reads replication throttles and topic configs
// on kraftlab's brokers as on Kafka's: IncrementalAlterConfigs, forwarded
// to the active controller, which commits ConfigRecords, and
// DescribeConfigs from the brokers' images.
func TestKafkaConfigsThrottlesAndTopicConfigs(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	if _, err := p.Run(context.Background(), "topics", "create", "paced", "--partitions", "2", "--replication-factor", "3"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p)
	boot := strings.Join(p.Brokers, ",")
	for _, args := range [][]string{
		{"--alter", "--entity-type", "brokers", "--entity-name", "102", "--add-config", "follower.replication.throttled.rate=51200,leader.replication.throttled.rate=102400"},
		{"--alter", "--entity-type", "topics", "--entity-name", "paced", "--add-config", "leader.replication.throttled.replicas=[0:101,1:102],min.insync.replicas=2"},
	} {
		if r := runTool(t, k, MainConfigs, append([]string{"--bootstrap-server", boot}, args...)...); r.Err != nil {
			t.Fatalf("kafka-configs %s: %v", strings.Join(args, " "), r.Err)
		}
	}
	caughtUp(t, p)
	r := runTool(t, k, MainConfigs, "--bootstrap-server", boot, "--describe", "--entity-type", "topics", "--entity-name", "paced")
	if r.Err != nil {
		t.Fatalf("kafka-configs --describe topic: %v", r.Err)
	}
	for _, want := range []string{"min.insync.replicas=2", "leader.replication.throttled.replicas=0:101,1:102"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("kafka-configs --describe topic paced lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = runTool(t, k, MainConfigs, "--bootstrap-server", boot, "--describe", "--entity-type", "brokers", "--entity-name", "102")
	if r.Err != nil {
		t.Fatalf("kafka-configs --describe broker: %v", r.Err)
	}
	for _, want := range []string{"follower.replication.throttled.rate=51200", "leader.replication.throttled.rate=102400"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("kafka-configs --describe broker 102 lacks %q:\n%s", want, r.Stdout)
		}
	}
}
