package server

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// withConfig applies rm's image plus one ConfigRecord, as the loader
// publishes a config change.
func withConfig(t *testing.T, rm *ReplicaManager, typ int8, name, key string, value *string) {
	t.Helper()
	d := image.NewMetadataDelta(rm.img.Load())
	if err := d.Replay(&record.ConfigRecord{ResourceType: typ, ResourceName: name, Name: key, Value: value}); err != nil {
		t.Fatal(err)
	}
	img := d.Apply(image.EmptyProvenance)
	rm.img.Store(img)
	rm.applyImage(img, time.Now())
}

// A topic's min.insync.replicas applies to its open replicas at once, as
// a dynamic config does in Kafka; removing it falls back to the dynamic
// cluster default, then to the broker's own.
func TestMinInsyncReplicasFollowsConfigChanges(t *testing.T) {
	rm := replicaRig(t) // "waits": led here, ISR 101 and 102
	p := rm.partitionByName("waits", 0)
	if n := p.MinInsyncReplicas(); n != 1 {
		t.Fatalf("min.insync.replicas %d at start, want Kafka's 1", n)
	}
	three := "3"
	withConfig(t, rm, record.ResourceTopic, "waits", "min.insync.replicas", &three)
	if n := p.MinInsyncReplicas(); n != 3 {
		t.Fatalf("min.insync.replicas %d after the topic's change to 3", n)
	}
	two := "2"
	withConfig(t, rm, record.ResourceBroker, "", "min.insync.replicas", &two)
	withConfig(t, rm, record.ResourceTopic, "waits", "min.insync.replicas", nil) // the topic's config removed
	if n := p.MinInsyncReplicas(); n != 2 {
		t.Fatalf("min.insync.replicas %d, want the cluster default 2", n)
	}
	withConfig(t, rm, record.ResourceBroker, "", "min.insync.replicas", nil)
	if n := p.MinInsyncReplicas(); n != 1 {
		t.Fatalf("min.insync.replicas %d, want the broker's own (Kafka's 1)", n)
	}
}

// A topic of one replica with min.insync.replicas 2 takes acks=all: Kafka
// asks for min(min.insync.replicas, replication factor) in-sync replicas
// (Partition.effectiveMinIsr, used by appendRecordsToLeader and
// checkEnoughReplicasReachOffset), so the leader alone is enough.
func TestMinInsyncReplicasAboveReplicationFactor(t *testing.T) {
	rm := replicaRig(t) // "led": one replica, on 101
	two := "2"
	withConfig(t, rm, record.ResourceTopic, "led", "min.insync.replicas", &two)
	if n := rm.partitionByName("led", 0).MinInsyncReplicas(); n != 2 {
		t.Fatalf("min.insync.replicas %d after the topic's change to 2", n)
	}
	got := syncProduce(t, rm, produceReq(9, -1, "led", ledID, 0, batch("x", "y")))
	if got.ErrorCode != 0 {
		t.Fatalf("acks=all on one replica with min.insync.replicas=2: error %d, want none", got.ErrorCode)
	}
	if hwm := rm.partitionByName("led", 0).HighWatermark(); hwm != 2 {
		t.Fatalf("high watermark %d after the acks=all produce, want 2", hwm)
	}
}
