package image

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// FuzzReplay replays arbitrary records (each one byte of length, then its
// framed bytes) on a small image: nothing panics, a refused record changes
// nothing, and whatever image results writes records that rebuild it.
func FuzzReplay(f *testing.F) {
	orders := topicID(1)
	seed := func(recs ...record.Record) []byte {
		var b []byte
		for _, r := range recs {
			e, err := record.Encode(r)
			if err != nil {
				f.Fatal(err)
			}
			b = append(append(b, byte(len(e))), e...)
		}
		return b
	}
	c := record.NewPartitionChangeRecord(orders, 1)
	c.Leader = 103
	f.Add(seed(c, &record.RemoveTopicRecord{TopicID: orders}))
	f.Add(seed(&record.TopicRecord{Name: "x", TopicID: topicID(9)}, partition(topicID(9), 0, 101), fence(101, 5, record.FencingFence)))
	f.Add(seed(&record.UnregisterBrokerRecord{BrokerID: 102, BrokerEpoch: 6}, &record.ConfigRecord{ResourceType: record.ResourceTopic, ResourceName: "orders", Name: "a"}))
	f.Add(seed(&record.ProducerIdsRecord{BrokerID: 101, BrokerEpoch: 5, NextProducerID: 2000}, &record.ProducerIdsRecord{BrokerID: 102, NextProducerID: 1500}))
	reg := &record.RegisterControllerRecord{ControllerID: 3000, IncarnationID: topicID(3),
		EndPoints: []record.ControllerEndpoint{{Name: "CONTROLLER", Host: "h", Port: 9093}},
		Features:  []record.ControllerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}}}
	f.Add(seed(reg, &record.UnregisterControllerRecord{ControllerID: 3000}, reg))
	f.Add(seed(&record.UserScramCredentialRecord{Name: "u", Mechanism: record.ScramSHA256, Salt: []byte{1}, StoredKey: []byte{2}, ServerKey: []byte{3}, Iterations: 4096},
		&record.RemoveUserScramCredentialRecord{Name: "u", Mechanism: record.ScramSHA256}))
	base := cluster(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewMetadataDelta(base)
		for len(b) > 0 {
			n := int(b[0])
			b = b[1:]
			if n > len(b) {
				break
			}
			r, err := record.Decode(b[:n])
			b = b[n:]
			if err != nil {
				continue
			}
			before := d.Apply(base.Provenance())
			if err := d.Replay(r); err != nil {
				if after := d.Apply(base.Provenance()); !after.Equal(before) {
					t.Fatalf("refused %s changed the delta: %v", record.Name(r), err)
				}
			}
		}
		img := d.Apply(base.Provenance())
		recs, err := img.Records()
		if err != nil {
			return // the image holds what its metadata.version cannot write
		}
		back := NewMetadataDelta(Empty)
		for _, r := range recs {
			raw, err := record.Encode(r)
			if err != nil {
				t.Fatalf("%s: %v", record.Name(r), err)
			}
			r2, err := record.Decode(raw)
			if err != nil {
				t.Fatalf("%s: %v", record.Name(r), err)
			}
			if err := back.Replay(r2); err != nil {
				t.Fatalf("snapshot record refused: %v", err)
			}
		}
		if !back.Apply(img.Provenance()).Equal(img) {
			t.Fatal("the image's records do not rebuild it")
		}
	})
}
