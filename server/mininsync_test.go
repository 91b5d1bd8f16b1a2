package server

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
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
	if got := syncProduce(t, rm, produceReq(9, -1, "waits", waitsID, 0, batch("x"))); got.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all with an ISR of 2 under min.insync.replicas=3: error %d", got.ErrorCode)
	}
	if got := syncProduce(t, rm, produceReq(9, 1, "waits", waitsID, 0, batch("y"))); got.ErrorCode != 0 {
		t.Fatalf("acks=1: error %d", got.ErrorCode)
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
