package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka's tools the reassignment and election scenarios run.
const (
	MainReassignPartitions = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand" // kafka-reassign-partitions
	MainLeaderElection     = "org.apache.kafka.tools.LeaderElectionCommand"              // kafka-leader-election
)

// outputs are what a tool printed on each run, kept for a later step.
type outputs struct {
	mu  sync.Mutex
	out map[*run]string
}

func (o *outputs) set(r *run, s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.out == nil {
		o.out = map[*run]string{}
	}
	o.out[r] = s
}

func (o *outputs) get(r *run) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out[r]
}

// reassignThrottle is the scenario's --throttle, in bytes a second.
const reassignThrottle = "50000"

// produceRecords writes n records of 1000 bytes to topic through a
// running broker of the run's system, acks=all.
func produceRecords(ctx context.Context, r *run, topic string, n int) error {
	_, boot, err := runningBroker(r.sys)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(boot), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%-1000d", i))}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// dynamicConfigs is `kafka-configs --describe` of a broker or a topic:
// its dynamic configs named in keys, as key=value, sorted; "none" when it
// has none of them.
func dynamicConfigs(entityType, name string, keys ...string) observer {
	return func(ctx context.Context, r *run) ([]fact, error) {
		out, err := r.tool(ctx, MainConfigs, "--describe", "--entity-type", entityType, "--entity-name", name)
		if err != nil {
			return nil, err
		}
		var kvs []string
		for _, line := range strings.Split(out, "\n") {
			kv, _, _ := strings.Cut(strings.TrimSpace(line), " sensitive=")
			k, _, ok := strings.Cut(kv, "=")
			if ok && slices.Contains(keys, k) {
				kvs = append(kvs, kv)
			}
		}
		slices.Sort(kvs)
		v := strings.Join(kvs, " ")
		if v == "" {
			v = "none"
		}
		return []fact{{key: entityType + " " + name + " throttle configs", value: v}}, nil
	}
}

// toolLines are the lines a tool printed, kept as facts in order: lines
// holding a log directory, which differs by machine, say only whether one
// was there.
func toolLines(what string, get func(r *run) string) observer {
	return func(_ context.Context, r *run) ([]fact, error) {
		var fs []fact
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(get(r)), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			n++
			if strings.HasPrefix(line, "{") {
				v, err := rollbackPlan(line)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", what, err)
				}
				line = v
			}
			fs = append(fs, fact{key: fmt.Sprintf("%s line %d", what, n), value: line})
		}
		return fs, nil
	}
}

// rollbackPlan is the current assignment --execute prints as JSON: its
// replicas, and whether each replica's log directory was named (the tool
// asks the brokers with DescribeLogDirs) or left "any".
func rollbackPlan(line string) (string, error) {
	var plan struct {
		Version    int `json:"version"`
		Partitions []struct {
			Topic     string   `json:"topic"`
			Partition int32    `json:"partition"`
			Replicas  []int32  `json:"replicas"`
			LogDirs   []string `json:"log_dirs"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(line), &plan); err != nil {
		return "", fmt.Errorf("rollback plan %q: %w", line, err)
	}
	var parts []string
	for _, p := range plan.Partitions {
		var dirs []string
		for _, d := range p.LogDirs {
			if d == "any" {
				dirs = append(dirs, "any")
			} else {
				dirs = append(dirs, "a directory")
			}
		}
		parts = append(parts, fmt.Sprintf("%s-%d replicas %v log_dirs [%s]", p.Topic, p.Partition, p.Replicas, strings.Join(dirs, ",")))
	}
	return fmt.Sprintf("rollback plan v%d: %s", plan.Version, strings.Join(parts, "; ")), nil
}

// reassignmentWithAThrottle moves a partition with data from broker 101
// to broker 102 with kafka-reassign-partitions --execute --throttle, runs
// --verify until it says the move completed (which removes the
// throttles), and compares the tool's words, the throttle configs
// kafka-configs reads before and after, and the partition.
func reassignmentWithAThrottle(l *lockstep) {
	const topic = "moving"
	l.begin()
	l.each(func(r *run) error {
		_, err := r.tool(l.ctx, MainTopics, "--create", "--topic", topic, "--replica-assignment", "101")
		return err
	})
	l.wait("moving-0 led by 101", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && p.Leader == 101, fmt.Sprint(p, err)
	})
	l.each(func(r *run) error { return produceRecords(l.ctx, r, topic, 500) })
	l.observe("created", topicDescribe(topic))

	plan := filepath.Join(l.t.TempDir(), "reassign.json")
	if err := os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[102]}]}`), 0o644); err != nil {
		l.t.Fatal(err)
	}
	var executed outputs
	l.each(func(r *run) error {
		out, err := r.tool(l.ctx, MainReassignPartitions, "--reassignment-json-file", plan, "--execute", "--throttle", reassignThrottle)
		executed.set(r, out)
		return err
	})
	throttles := []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate",
		"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
	l.observe("executed", toolLines("--execute", executed.get),
		dynamicConfigs("brokers", "101", throttles...), dynamicConfigs("brokers", "102", throttles...),
		dynamicConfigs("topics", topic, throttles...))

	var verified outputs
	l.wait("--verify says the reassignment completed", 3*time.Minute, func(r *run) (bool, string) {
		out, err := r.tool(l.ctx, MainReassignPartitions, "--reassignment-json-file", plan, "--verify")
		if err != nil {
			return false, err.Error()
		}
		verified.set(r, out)
		return strings.Contains(out, "Reassignment of partition moving-0 is completed."), lastLines(out, 3)
	})
	l.observe("verified", toolLines("--verify", verified.get),
		dynamicConfigs("brokers", "101", throttles...), dynamicConfigs("brokers", "102", throttles...),
		dynamicConfigs("topics", topic, throttles...), topicDescribe(topic))
}

// electionResult is what kafka-leader-election said of topic-0: elected,
// already elected, or the error line.
func electionResult(topic string, get func(r *run) string) observer {
	return func(_ context.Context, r *run) ([]fact, error) {
		tp := topic + "-0"
		v := "not named"
		for _, line := range strings.Split(get(r), "\n") {
			names := func(prefix string) bool {
				rest, ok := strings.CutPrefix(line, prefix)
				return ok && slices.Contains(strings.Split(rest, ", "), tp)
			}
			switch {
			case names("Successfully completed leader election (PREFERRED) for partitions "):
				v = "elected"
			case names("Valid replica already elected for partitions "):
				v = "already elected"
			case strings.Contains(line, "for partition: "+tp+":"):
				v = line
			}
		}
		return []fact{{key: "kafka-leader-election " + tp, value: v}}, nil
	}
}

// preferredElectionAfterARestart kills a partition's leader, lets it come
// back into the ISR as a follower, and gives it the leadership back with
// kafka-leader-election --election-type PREFERRED
// --all-topic-partitions.
func preferredElectionAfterARestart(l *lockstep) {
	const topic = "elect"
	l.begin()
	l.createPartition(topic)
	l.observe("created", topicDescribe(topic))
	l.each(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Kill(l.ctx, id) })
	l.wait("a new partition leader", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && p.Leader > 0 && r.label(p.Leader) != "P0", fmt.Sprint(p, err)
	})
	l.each(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Start(l.ctx, id) })
	l.wait("P0 back in the ISR", time.Minute, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && len(p.Isr) == 2, fmt.Sprint(p, err)
	})
	l.observe("P0 restarted", topicDescribe(topic))
	var elected outputs
	l.each(func(r *run) error {
		out, err := r.tool(l.ctx, MainLeaderElection, "--election-type", "PREFERRED", "--all-topic-partitions")
		elected.set(r, out)
		return err
	})
	l.wait("P0 leads again", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && r.label(p.Leader) == "P0", fmt.Sprint(p, err)
	})
	l.observe("elected", electionResult(topic, elected.get), topicDescribe(topic))
}
