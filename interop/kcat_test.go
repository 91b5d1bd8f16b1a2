package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// kcatMetadata is `kcat -L -J`: what librdkafka read from one Metadata
// answer.
type kcatMetadata struct {
	OriginatingBroker struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"originating_broker"`
	ControllerID int32 `json:"controllerid"`
	Brokers      []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"` // host:port
	} `json:"brokers"`
	Topics []kcatTopic `json:"topics"`
}

// kcatTopic is one topic of kcatMetadata.
type kcatTopic struct {
	Topic      string `json:"topic"`
	Error      string `json:"error"`
	Partitions []struct {
		Partition int32 `json:"partition"`
		Leader    int32 `json:"leader"`
		Replicas  []struct {
			ID int32 `json:"id"`
		} `json:"replicas"`
		Isrs []struct {
			ID int32 `json:"id"`
		} `json:"isrs"`
	} `json:"partitions"`
}

// needKcat returns kcat's path, or skips the test (fails with
// KRAFTLAB_INTEROP_REQUIRE=1).
func needKcat(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("KRAFTLAB_INTEROP_REQUIRE") != "" {
			t.Fatal("no kcat on PATH")
		}
		t.Skip("skipped: no kcat on PATH")
	}
	return bin
}

func runKcat(t *testing.T, bin string, args ...string) string {
	t.Helper()
	return runKcatIn(t, bin, "", args...)
}

// runKcatIn runs kcat with stdin as its input (what -P produces).
func runKcatIn(t *testing.T, bin, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	t.Logf("$ kcat %s  (%v)\n%s%s", strings.Join(args, " "), err, indent(out.String()), indent(errOut.String()))
	if err != nil {
		t.Fatalf("kcat %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// TestKcatMetadata lets librdkafka read a broker's Metadata: kcat -L (text
// and -J JSON) must list every broker at its listener and every topic's
// partitions with the leaders, replicas and ISRs kraftlab committed.
func TestKcatMetadata(t *testing.T) {
	bin := needKcat(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	for _, c := range []struct {
		name       string
		partitions string
		rf         string
	}{{"orders", "3", "2"}, {"clicks", "2", "3"}} {
		if _, err := p.Run(context.Background(), "topics", "create", c.name, "--partitions", c.partitions, "--replication-factor", c.rf); err != nil {
			t.Fatal(err)
		}
	}
	caughtUp(t, p)
	want := kraftlabTopics(t, p)
	slices.SortFunc(want, func(a, b TopicDescription) int { return strings.Compare(a.Name, b.Name) })

	for i, boot := range p.Brokers {
		var md kcatMetadata
		js := runKcat(t, bin, "-b", boot, "-L", "-J")
		if err := json.Unmarshal([]byte(js), &md); err != nil {
			t.Fatalf("kcat -L -J: %v", err)
		}
		if md.OriginatingBroker.ID != int32(101+i) {
			t.Errorf("kcat at %s: originating broker %d, want %d", boot, md.OriginatingBroker.ID, 101+i)
		}
		var ids []int32
		for j, b := range md.Brokers {
			ids = append(ids, b.ID)
			if j < len(p.Brokers) && b.Name != p.Brokers[j] {
				t.Errorf("broker %d at %s, kraftlab's listener %s", b.ID, b.Name, p.Brokers[j])
			}
		}
		if !slices.Equal(ids, []int32{101, 102, 103}) {
			t.Errorf("brokers %v, want 101..103", ids)
		}
		// A KRaft broker names a random alive broker as the controller:
		// clients send controller-bound requests there to be forwarded.
		if !slices.Contains(ids, md.ControllerID) {
			t.Errorf("controller id %d is not a listed broker", md.ControllerID)
		}
		slices.SortFunc(md.Topics, func(a, b kcatTopic) int {
			return strings.Compare(a.Topic, b.Topic)
		})
		if len(md.Topics) != len(want) {
			t.Fatalf("kcat lists %d topics, kraftlab %d", len(md.Topics), len(want))
		}
		for j, tp := range md.Topics {
			if tp.Topic != want[j].Name || tp.Error != "" {
				t.Errorf("topic %q (error %q), kraftlab %q", tp.Topic, tp.Error, want[j].Name)
				continue
			}
			var got []TopicPartition
			for _, pt := range tp.Partitions {
				g := TopicPartition{Partition: pt.Partition, Leader: pt.Leader}
				for _, r := range pt.Replicas {
					g.Replicas = append(g.Replicas, r.ID)
				}
				for _, r := range pt.Isrs {
					g.Isr = append(g.Isr, r.ID)
				}
				got = append(got, g)
			}
			slices.SortFunc(got, func(a, b TopicPartition) int { return int(a.Partition - b.Partition) })
			comparePartitions(t, "kcat -L -J topic "+tp.Topic, got, want[j].Partitions)
		}
	}

	text := runKcat(t, bin, "-b", p.Brokers[0], "-L")
	for i, addr := range p.Brokers {
		if !strings.Contains(text, fmt.Sprintf("broker %d at %s", 101+i, addr)) {
			t.Errorf("kcat -L does not list broker %d at %s", 101+i, addr)
		}
	}
	for _, w := range want {
		if !strings.Contains(text, fmt.Sprintf("topic %q with %d partitions:", w.Name, len(w.Partitions))) {
			t.Errorf("kcat -L does not list topic %q with %d partitions", w.Name, len(w.Partitions))
		}
	}

	var md kcatMetadata
	if err := json.Unmarshal([]byte(runKcat(t, bin, "-b", p.Brokers[0], "-L", "-J", "-t", "nope")), &md); err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || md.Topics[0].Error != "Broker: Unknown topic or partition" {
		t.Errorf("kcat -L -t nope: %+v, want UNKNOWN_TOPIC_OR_PARTITION (no auto-creation)", md.Topics)
	}
}

// TestKcatProduceConsume lets librdkafka produce to and consume from
// kraftlab's brokers: every record kcat -P sent (acks=all, librdkafka's
// default) comes back once from kcat -C, whichever broker each goes through.
func TestKcatProduceConsume(t *testing.T) {
	bin := needKcat(t)
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	if _, err := p.Run(context.Background(), "topics", "create", "events", "--partitions", "3", "--replication-factor", "3"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p)
	var sent []string
	for i := range 30 {
		sent = append(sent, fmt.Sprintf("event %02d", i))
	}
	runKcatIn(t, bin, strings.Join(sent, "\n")+"\n", "-b", strings.Join(p.Brokers, ","), "-P", "-t", "events", "-X", "enable.idempotence=false")
	got := strings.Fields(strings.ReplaceAll(runKcat(t, bin, "-b", p.Brokers[1], "-C", "-t", "events", "-o", "beginning", "-e", "-q", "-f", "%s|"), " ", "_"))
	var read []string
	for _, f := range got {
		for _, v := range strings.Split(f, "|") {
			if v != "" {
				read = append(read, strings.ReplaceAll(v, "_", " "))
			}
		}
	}
	slices.Sort(read)
	if !slices.Equal(read, sent) {
		t.Fatalf("kcat -C read %d records %q, kcat -P sent %d", len(read), read, len(sent))
	}
}
