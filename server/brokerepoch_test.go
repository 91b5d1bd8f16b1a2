package server

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/twmb/franz-go/pkg/kerr"
)

var growsID = record.NewUuid(13, 14) // "grows": led by 101, 102 out of the ISR

// rigWithBroker102 is replicaRig whose metadata registers broker 102,
// unfenced, at broker epoch 20, and hosts "grows" as well.
func rigWithBroker102(t *testing.T) *ReplicaManager {
	t.Helper()
	rm := replicaRig(t)
	d := image.NewMetadataDelta(rm.img.Load())
	for _, r := range []record.Record{
		&record.RegisterBrokerRecord{Version: record.RegisterBrokerVersion, BrokerID: 102, BrokerEpoch: 20, IncarnationID: record.NewUuid(102, 2),
			EndPoints: []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9102}}},
		&record.TopicRecord{Name: "grows", TopicID: growsID},
		&record.PartitionRecord{Version: record.PartitionVersion, TopicID: growsID, Replicas: []int32{101, 102}, Isr: []int32{101}, Leader: 101,
			RemovingReplicas: []int32{}, AddingReplicas: []int32{}, Directories: make([]record.Uuid, 2)},
	} {
		if err := d.Replay(r); err != nil {
			t.Fatal(err)
		}
	}
	img := d.Apply(image.EmptyProvenance)
	rm.img.Store(img)
	rm.applyImage(img, time.Now())
	return rm
}

// KIP-903 on the leader: a follower's fetch that names a broker epoch
// older than the one the leader's metadata holds for its broker comes
// from an incarnation that is gone, and is answered
// NOT_LEADER_OR_FOLLOWER without records (Kafka's
// Replica.updateFetchStateOrThrow); one naming the current epoch is served.
func TestLeaderRefusesAFetchFromAStaleIncarnation(t *testing.T) {
	rm := rigWithBroker102(t)
	if rp := syncProduce(t, rm, produceReq(13, 1, "", waitsID, 0, batch("a", "b"))); rp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", rp)
	}
	stale := fetchReq(102, waitsID, 0, 0, 0)
	stale.ReplicaState.Epoch = 10
	rp := wait(t, asyncFetch(rm, stale, true)).Topics[0].Partitions[0]
	if rp.ErrorCode != kerr.NotLeaderForPartition.Code || len(rp.RecordBatches) != 0 {
		t.Fatalf("a fetch of epoch 10 for a broker at 20: error %d with %d bytes, want NOT_LEADER_OR_FOLLOWER and none", rp.ErrorCode, len(rp.RecordBatches))
	}
	current := fetchReq(102, waitsID, 0, 0, 0)
	current.ReplicaState.Epoch = 20
	if rp := wait(t, asyncFetch(rm, current, true)).Topics[0].Partitions[0]; rp.ErrorCode != 0 || len(rp.RecordBatches) == 0 {
		t.Fatalf("a fetch of the current epoch: error %d with %d bytes", rp.ErrorCode, len(rp.RecordBatches))
	}
}

// The AlterPartition a leader sends carries, for each ISR member, the
// broker epoch its fetches named (NewIsrWithEpochs, Kafka's
// addBrokerEpochToIsr), not the one the leader's metadata holds: a
// follower that fetched without one (Fetch before v15) goes as -1, one
// that named its epoch with it, and the leader with its own.
func TestAlterPartitionCarriesTheFetchedBrokerEpochs(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int16
		epoch   int64
		want    int64
	}{{"Fetch v14, no epoch", 14, -1, -1}, {"Fetch v18, epoch 20", 18, 20, 20}} {
		t.Run(c.name, func(t *testing.T) {
			rm := rigWithBroker102(t)
			f := fetchReq(102, growsID, 0, 0, 0)
			f.Version, f.ReplicaState.Epoch = c.version, c.epoch
			if rp := wait(t, asyncFetch(rm, f, true)).Topics[0].Partitions[0]; rp.ErrorCode != 0 {
				t.Fatalf("fetch: error %d", rp.ErrorCode)
			}
			p := rm.partitionByName("grows", 0)
			var pending *partition.Proposal
			waitFor(t, "the expansion proposed", func() bool {
				rm.maybeChangeISR(time.Now())
				pending = p.State().Pending
				return pending != nil
			})
			req, _ := rm.alterPartitionRequest(map[*partition.Partition]partition.Proposal{p: *pending})
			got := map[int32]int64{}
			for _, m := range req.Topics[0].Partitions[0].NewEpochISR {
				got[m.BrokerID] = m.BrokerEpoch
			}
			if len(got) != 2 || got[101] != 5 || got[102] != c.want {
				t.Fatalf("NewEpochISR %v, want 101 at 5 and 102 at %d", got, c.want)
			}
		})
	}
}
