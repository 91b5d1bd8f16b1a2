package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftlab/kraftlab/internal/poll"
)

// The hostile review's CreatePartitions: one anonymous request grew a
// topic to 10,001 partitions (under the per-request cap), two open files
// each, until every listener failed accept4 with too many open files.
// max.broker.partitions bounds the replicas a broker hosts; lowered here
// to 40 so that the probe creates 300 partitions rather than 10,000 (the
// same mechanism): the request is refused with POLICY_VIOLATION and the
// process opens no file for it.
func TestHostilePartitionFlood(t *testing.T) {
	ht := openHostile(t, "max.broker.partitions=40")
	cl := ht.client(t)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "flood"); err != nil {
		t.Fatal(err)
	}
	ht.leaderOf(t, cl, "flood") // kadm reads the partition count from metadata
	before, _ := openFiles(t)
	created := 0 // partitions the attack created
	grown, err := adm.CreatePartitions(ctx, 300, "flood")
	if err == nil {
		err = grown["flood"].Err
	}
	t.Logf("CreatePartitions to 301: %v", err)
	if err == nil {
		created += 300
	}
	if !errors.Is(err, kerr.PolicyViolation) {
		t.Errorf("CreatePartitions past max.broker.partitions: %v, want POLICY_VIOLATION", err)
	}
	topic, err := adm.CreateTopic(ctx, 300, 1, nil, "flood2")
	if err == nil {
		err = topic.Err
	}
	t.Logf("CreateTopics of 300 partitions: %v", err)
	if err == nil {
		created += 300
	}
	if !errors.Is(err, kerr.PolicyViolation) {
		t.Errorf("CreateTopics past max.broker.partitions: %v, want POLICY_VIOLATION", err)
	}
	ht.checkServing(t, "after the partition flood")
	// The brokers open what was created on their own goroutines, one file
	// or more a replica: wait for them (a refusal created nothing).
	var after int
	poll.Until(t, hostileRecovery, "the brokers to open the partitions created", func() bool {
		after, _ = openFiles(t)
		return after >= before+created
	})
	t.Logf("%d partitions created; open files %d -> %d", created, before, after)
	if after-before > 50 {
		t.Errorf("open files %d -> %d", before, after)
	}
}
