package interop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// saramaConfig is a sarama client speaking Kafka 4.x's protocol (the
// newest sarama knows), with the consumer group's offsets committed by
// hand at the end of each session, not on a timer, so that what a run
// committed is exactly what it read.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "interop-sarama"
	cfg.Version = sarama.MaxVersion
	cfg.Metadata.RefreshFrequency = time.Second
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewHashPartitioner
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Rebalance.Timeout = 20 * time.Second
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	return cfg
}

// saramaReader is a sarama ConsumerGroupHandler that counts every value
// it is handed, marks it consumed, and commits in Cleanup, which sarama
// calls once every claim of the session has returned.
type saramaReader struct {
	mu   sync.Mutex
	got  map[string]int
	want int
	// done is closed once want distinct values were read.
	done     chan struct{}
	doneOnce sync.Once
	commitOK bool
}

func newSaramaReader(want int) *saramaReader {
	return &saramaReader{got: map[string]int{}, want: want, done: make(chan struct{})}
}

func (h *saramaReader) Setup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaReader) Cleanup(s sarama.ConsumerGroupSession) error {
	s.Commit()
	h.mu.Lock()
	h.commitOK = true
	h.mu.Unlock()
	return nil
}

func (h *saramaReader) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				return nil
			}
			h.mu.Lock()
			h.got[string(m.Value)]++
			if len(h.got) >= h.want {
				h.doneOnce.Do(func() { close(h.done) })
			}
			h.mu.Unlock()
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

// readWithSarama runs one sarama consumer group member of group on topic
// until it has read want distinct values, then closes it (which ends the
// session: Cleanup commits, the member leaves), and returns the values
// read with how often each was.
func readWithSarama(t *testing.T, brokers []string, group, topic string, want int) map[string]int {
	t.Helper()
	cg, err := sarama.NewConsumerGroup(brokers, group, saramaConfig())
	if err != nil {
		t.Fatalf("sarama.NewConsumerGroup: %v", err)
	}
	h := newSaramaReader(want)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		// Consume returns at each rebalance; a member loops over it.
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
				t.Logf("sarama Consume: %v", err)
				time.Sleep(100 * time.Millisecond) // a back-off, not a wait for state
			}
		}
		ended <- nil
	}()
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for err := range cg.Errors() {
			t.Logf("sarama consumer group: %v", err)
		}
	}()
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		h.mu.Lock()
		t.Errorf("sarama read %d distinct values of %d in 60s", len(h.got), want)
		h.mu.Unlock()
	}
	cancel()
	<-ended
	if err := cg.Close(); err != nil {
		t.Errorf("sarama consumer group Close: %v", err)
	}
	<-logged // Close ends Errors
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.commitOK {
		t.Errorf("sarama's session ended without Cleanup committing")
	}
	return h.got
}

// A sarama ConsumerGroup reads every record of a playground's topic once
// from the beginning and commits; the committed offsets are the log ends;
// a second run of the same group reads only the records produced since.
func TestSaramaConsumerGroup(t *testing.T) {
	p := startPlayground(t, "--controllers", "1", "--brokers", "3", "--profile", "fast")
	brokersUnfenced(t, p)
	if _, err := p.Run(context.Background(), "topics", "create", "orders", "--partitions", "3", "--replication-factor", "3"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, p)

	client, err := sarama.NewClient(p.Brokers, saramaConfig())
	if err != nil {
		t.Fatalf("sarama.NewClient: %v", err)
	}
	defer client.Close()
	prod, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produce := func(vs []string) {
		t.Helper()
		msgs := make([]*sarama.ProducerMessage, len(vs))
		for i, v := range vs {
			msgs[i] = &sarama.ProducerMessage{Topic: "orders", Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)), Value: sarama.StringEncoder(v)}
		}
		if err := prod.SendMessages(msgs); err != nil {
			t.Fatalf("sarama SendMessages: %v", err)
		}
	}
	check := func(run string, got map[string]int, want []string) {
		t.Helper()
		for _, v := range want {
			if got[v] != 1 {
				t.Errorf("%s: %q read %d times", run, v, got[v])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: read %d distinct values, want %d", run, len(got), len(want))
		}
	}

	first := groupRecords("order", 60)
	produce(first)
	start := time.Now()
	check("first run", readWithSarama(t, p.Brokers, "billing", "orders", len(first)), first)
	t.Logf("first run: %.1fs", time.Since(start).Seconds())

	// What the group committed is where each partition's log ends.
	adm, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, "the group's committed offsets at the log ends", func() bool {
		return saramaCommittedAtEnds(t, client, adm, "billing", "orders") == ""
	}, func() string { return saramaCommittedAtEnds(t, client, adm, "billing", "orders") })

	second := groupRecords("refund", 20)
	produce(second)
	start = time.Now()
	check("second run", readWithSarama(t, p.Brokers, "billing", "orders", len(second)), second)
	t.Logf("second run: %.1fs", time.Since(start).Seconds())
}

// saramaCommittedAtEnds says where group's committed offsets of topic differ
// from the partitions' log ends, "" when they do not.
func saramaCommittedAtEnds(t *testing.T, client sarama.Client, adm sarama.ClusterAdmin, group, topic string) string {
	t.Helper()
	parts, err := client.Partitions(topic)
	if err != nil {
		return err.Error()
	}
	resp, err := adm.ListConsumerGroupOffsets(group, map[string][]int32{topic: parts})
	if err != nil {
		return err.Error()
	}
	var diffs []string
	for _, p := range parts {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return err.Error()
		}
		b := resp.GetBlock(topic, p)
		if b == nil || b.Err != sarama.ErrNoError || b.Offset != end {
			diffs = append(diffs, fmt.Sprintf("partition %d: committed %+v, log end %d", p, b, end))
		}
	}
	return strings.Join(diffs, "; ")
}
