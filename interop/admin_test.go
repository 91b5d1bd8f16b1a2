package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// kraftlabTopics is `kraftlab topics describe --json`: the active
// controller's committed topics.
func kraftlabTopics(t *testing.T, p *Playground, names ...string) []TopicDescription {
	t.Helper()
	out, err := p.Run(context.Background(), append([]string{"topics", "describe", "--json"}, names...)...)
	if err != nil {
		t.Fatal(err)
	}
	var topics []TopicDescription
	if err := json.Unmarshal([]byte(out), &topics); err != nil {
		t.Fatalf("topics describe --json: %v: %s", err, out)
	}
	return topics
}

// caughtUp waits until every broker has applied all committed metadata,
// so that what a broker answers is what the controller committed.
func caughtUp(t *testing.T, p *Playground) {
	t.Helper()
	if _, err := p.Run(context.Background(), "wait", "caught-up", "--timeout", "20s"); err != nil {
		dumpPlayground(t, p)
		t.Fatal(err)
	}
}

// dumpPlayground logs what the playground's nodes and events say, so that
// a wait that failed on a loaded machine can be read afterwards.
func dumpPlayground(t *testing.T, p *Playground) {
	t.Helper()
	for _, args := range [][]string{{"nodes"}, {"brokers", "--json"}, {"events"}} {
		out, err := p.Run(context.Background(), args...)
		t.Logf("$ kraftlab %s  (%v)\n%s", strings.Join(args, " "), err, indent(out))
	}
	if log, err := os.ReadFile(p.LogFile); err == nil {
		lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
		t.Logf("the nodes' server log, last %d lines:\n%s", min(len(lines), 200), indent(strings.Join(lines[max(0, len(lines)-200):], "\n")))
	}
}

// brokersUnfenced waits until the committed metadata has every broker
// unfenced: caught-up alone does not say that, and a topic's replicas go
// to unfenced brokers only.
func brokersUnfenced(t *testing.T, p *Playground) {
	t.Helper()
	for i := range p.Brokers {
		if _, err := p.Run(context.Background(), "wait", "unfenced", strconv.Itoa(101+i), "--timeout", "20s"); err != nil {
			dumpPlayground(t, p)
			t.Fatal(err)
		}
	}
}

// comparePartitions reports where a tool's partitions differ from
// kraftlab's: leader, replicas (in order: the first is the preferred
// leader) and ISR.
func comparePartitions(t *testing.T, tool string, got, want []TopicPartition) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d partitions, kraftlab %d", tool, len(got), len(want))
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Partition != w.Partition || g.Leader != w.Leader || !slices.Equal(g.Replicas, w.Replicas) || !slices.Equal(g.Isr, w.Isr) {
			t.Errorf("%s partition %d: leader %d replicas %v isr %v; kraftlab: partition %d leader %d replicas %v isr %v",
				tool, g.Partition, g.Leader, g.Replicas, g.Isr, w.Partition, w.Leader, w.Replicas, w.Isr)
		}
	}
}

// toolError is the line Kafka's admin tools print for a failed command.
func toolError(r Result) string {
	for _, line := range strings.Split(r.Stdout+"\n"+r.Stderr, "\n") {
		if _, msg, ok := strings.Cut(line, "Error while executing topic command : "); ok {
			return strings.TrimSpace(msg)
		}
	}
	return ""
}

// TestKafkaAdminToolsAgainstBrokers points Kafka's own admin tools
// straight at a playground's brokers, with no Front: kafka-topics
// creates, lists, describes and deletes a topic, and its errors are
// Kafka's; kafka-broker-api-versions lists every broker with exactly the
// versions it advertises; kafka-cluster reads the cluster id and the
// brokers' endpoints.
func TestKafkaAdminToolsAgainstBrokers(t *testing.T) {
	k := needKafka(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	boot := p.Brokers[0]
	topics := func(args ...string) Result {
		t.Helper()
		return runTool(t, k, MainTopics, append([]string{"--bootstrap-server", boot}, args...)...)
	}

	t.Run("topics", func(t *testing.T) {
		r := topics("--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2", "--config", "retention.ms=60000")
		if r.Err != nil || !strings.Contains(r.Stdout, "Created topic orders.") {
			t.Fatalf("create: %v %q", r.Err, toolError(r))
		}
		caughtUp(t, p)
		r = topics("--list")
		if r.Err != nil || !slices.Contains(strings.Fields(r.Stdout), "orders") {
			t.Fatalf("list: %v %q", r.Err, r.Stdout)
		}
		want := kraftlabTopics(t, p, "orders")
		r = topics("--describe", "--topic", "orders")
		if r.Err != nil {
			t.Fatalf("describe: %v %q", r.Err, toolError(r))
		}
		got := ParseTopicsDescribe(r.Stdout)
		if len(got) != 1 || len(want) != 1 {
			t.Fatalf("describe: Kafka printed %d topics, kraftlab %d", len(got), len(want))
		}
		if g, w := got[0], want[0]; g.Name != w.Name || g.TopicID != w.TopicID || g.PartitionCount != 3 || g.ReplicationFactor != 2 || g.Configs != "min.insync.replicas=1,retention.ms=60000" {
			// min.insync.replicas is the cluster default the bootstrap
			// writes with ELR on, as Kafka 4.4's does.
			t.Errorf("describe summary: %+v; kraftlab %s id %s, want 3 partitions, rf 2, Configs min.insync.replicas=1,retention.ms=60000", g, w.Name, w.TopicID)
		}
		comparePartitions(t, "kafka-topics --describe", got[0].Partitions, want[0].Partitions)
		if strings.Contains(r.Stdout, "Elr: N/A") || !strings.Contains(r.Stdout, "\tElr: \tLastKnownElr: ") {
			// The admin client falls back to Metadata, which has no
			// ELR, when a broker does not serve DescribeTopicPartitions.
			t.Errorf("Elr and LastKnownElr not printed empty, as from DescribeTopicPartitions:\n%s", r.Stdout)
		}
	})

	t.Run("errors", func(t *testing.T) {
		for _, c := range []struct {
			name string
			args []string
			want string // Kafka's message, as kafka-topics prints it
		}{
			{"existing topic", []string{"--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1"},
				"Topic 'orders' already exists."},
			// Kafka 4.4 counts every registered broker and ends "are
			// registered or some brokers have all their log directories
			// cordoned."; kraftlab places on unfenced brokers only.
			{"replication factor above the brokers", []string{"--create", "--topic", "wide", "--partitions", "1", "--replication-factor", "4"},
				"Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered and unfenced."},
			{"describe an unknown topic", []string{"--describe", "--topic", "nope"}, "Topic 'nope' does not exist as expected"},
			{"delete an unknown topic", []string{"--delete", "--topic", "nope"}, "Topic 'nope' does not exist as expected"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := topics(c.args...)
				if r.Err == nil {
					t.Fatalf("kafka-topics %v succeeded", c.args)
				}
				if got := toolError(r); got != c.want {
					t.Errorf("kafka-topics printed %q, want %q", got, c.want)
				}
			})
		}
	})

	t.Run("broker-api-versions", func(t *testing.T) {
		r := runTool(t, k, MainBrokerAPIVersions, "--bootstrap-server", boot)
		if r.Err != nil {
			t.Fatalf("kafka-broker-api-versions: %v", r.Err)
		}
		nodes := parseBrokerAPIVersions(r.Stdout)
		if len(nodes) != len(p.Brokers) {
			t.Errorf("Kafka listed nodes %v, want the %d brokers", nodes, len(p.Brokers))
		}
		for i, addr := range p.Brokers {
			id := int32(101 + i)
			printed, ok := nodes[id]
			if !ok {
				t.Errorf("broker %d (%s) not listed", id, addr)
				continue
			}
			if !strings.Contains(r.Stdout, fmt.Sprintf("%s (id: %d rack: null isFenced: false) -> (", addr, id)) {
				t.Errorf("broker %d: not listed at %s, unfenced", id, addr)
			}
			own, err := APIVersions(addr)
			if err != nil {
				t.Fatal(err)
			}
			for key, rng := range own {
				if got, ok := printed[key]; ok && got != rng {
					t.Errorf("broker %d API %d: Kafka printed %v, kraftlab advertises %v", id, key, got, rng)
				}
			}
			for key := range printed {
				if _, ok := own[key]; !ok {
					t.Errorf("broker %d: Kafka printed API %d as supported, kraftlab does not advertise it", id, key)
				}
			}
			for _, key := range []int16{3, 19, 20, 32, 37, 55, 60} { // Metadata … DescribeCluster
				if _, ok := printed[key]; !ok {
					t.Errorf("broker %d: Kafka does not list API %d as supported", id, key)
				}
			}
		}
	})

	t.Run("cluster", func(t *testing.T) {
		status, err := p.Run(context.Background(), "status")
		if err != nil {
			t.Fatal(err)
		}
		_, st := ParseStatus(status)
		r := runTool(t, k, MainCluster, "cluster-id", "--bootstrap-server", boot)
		if want := "Cluster ID: " + st["ClusterId"]; r.Err != nil || strings.TrimSpace(r.Stdout) != want {
			t.Errorf("kafka-cluster cluster-id printed %q (%v), want %q", r.Stdout, r.Err, want)
		}
		r = runTool(t, k, MainCluster, "list-endpoints", "--bootstrap-server", boot)
		if r.Err != nil {
			t.Fatalf("kafka-cluster list-endpoints: %v", r.Err)
		}
		cols, rows := ParseTable(r.Stdout)
		if !slices.Equal(cols, []string{"ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE"}) || len(rows) != len(p.Brokers) {
			t.Fatalf("list-endpoints: columns %v, %d rows, want %d brokers", cols, len(rows), len(p.Brokers))
		}
		for i, row := range rows {
			host, port, _ := net.SplitHostPort(p.Brokers[i])
			want := map[string]string{"ID": strconv.Itoa(101 + i), "HOST": host, "PORT": port, "RACK": "null", "STATE": "unfenced", "ENDPOINT_TYPE": "broker"}
			for col, v := range want {
				if row[col] != v {
					t.Errorf("list-endpoints row %d %s: %q, want %q", i, col, row[col], v)
				}
			}
		}
	})

	// Last: the topic the other subtests read goes.
	t.Run("delete", func(t *testing.T) {
		if r := topics("--delete", "--topic", "orders"); r.Err != nil {
			t.Fatalf("delete: %v %q", r.Err, toolError(r))
		}
		caughtUp(t, p)
		if got := kraftlabTopics(t, p); len(got) != 0 {
			t.Errorf("kraftlab still has %v", got)
		}
		if r := topics("--list"); r.Err != nil || strings.TrimSpace(r.Stdout) != "" {
			t.Errorf("list after delete: %v %q", r.Err, r.Stdout)
		}
	})
}
