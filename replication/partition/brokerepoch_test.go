package partition

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftlab/kraftlab/storage"
)

// KIP-903: replica 3's broker re-registered with epoch 20 (its old
// incarnation had 10). A fetch still naming 10 is refused as
// NOT_LEADER_OR_FOLLOWER and records nothing; one naming 20 is taken,
// and the expansion it allows carries 20 for the controller's check, as
// Kafka's Replica.updateFetchStateOrThrow and Partition.addBrokerEpochToIsr
// do. A follower whose fetches named an epoch the metadata no longer holds
// is not proposed at all (isBrokerEpochIsrEligible).
func TestFollowerBrokerEpochs(t *testing.T) {
	epochs := map[int32]int64{2: 7, 3: 20}
	p, err := New(Config{
		Topic: "t", TopicID: topicID, Partition: 0, Dir: t.TempDir(), LocalBrokerID: 1,
		Log: storage.Options{FlushPolicy: storage.FlushNever}, MinInsyncReplicas: 1,
		ReplicaLagTimeMax: lag, Now: func() time.Time { return t0 },
		AliveBrokerEpoch: func(id int32) (int64, bool) { e, ok := epochs[id]; return e, ok },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	leader(t, p, []int32{1, 2})
	mustAppend(t, p, 5)
	if _, err := p.UpdateFollowerFetch(3, 10, 5, t0); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("a fetch of the stale incarnation: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	if prop, ok := p.ISRChange(t0); ok {
		t.Fatalf("the refused fetch led to %+v", prop)
	}
	if _, err := p.UpdateFollowerFetch(2, 7, 5, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpdateFollowerFetch(3, 20, 5, t0); err != nil {
		t.Fatal(err)
	}
	prop, ok := p.ISRChange(t0)
	if !ok || !slices.Equal(prop.ISR, []int32{1, 2, 3}) || !slices.Equal(prop.BrokerEpochs, []int64{-1, 7, 20}) {
		t.Fatalf("proposal %+v %v, want [1 2 3] with epochs [-1 7 20]", prop, ok)
	}
	p.AbortISRChange()
	// Broker 3 registers again (epoch 30) before its new incarnation
	// fetches: what it fetched as 20 no longer makes it eligible.
	epochs[3] = 30
	if _, err := p.UpdateFollowerFetch(2, 7, 5, t0); err != nil {
		t.Fatal(err)
	}
	p.remotes[3].fetchedSinceISRCheck = true
	if prop, ok := p.ISRChange(t0); ok {
		t.Fatalf("a follower known by an old epoch proposed: %+v", prop)
	}
	// A fetch that names no epoch (-1, before Fetch v15) is taken.
	if _, err := p.UpdateFollowerFetch(3, -1, 5, t0); err != nil {
		t.Fatal(err)
	}
	if prop, ok := p.ISRChange(t0); !ok || !slices.Equal(prop.BrokerEpochs, []int64{-1, 7, -1}) {
		t.Fatalf("proposal %+v %v, want epochs [-1 7 -1]", prop, ok)
	}
}
