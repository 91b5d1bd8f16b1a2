package wire

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func produceRequest(version int16, records ...[]byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = version, -1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "big"
	for i, r := range records {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition, pp.Records = int32(i), r
		pt.Partitions = append(pt.Partitions, pp)
	}
	req.Topics = append(req.Topics, pt)
	return req
}

// A Produce's charge is what its structure decodes into, not its records:
// two 600 KB batches cost about a kilobyte.
func TestProduceDecodeBoundSkipsRecords(t *testing.T) {
	records := bytes.Repeat([]byte{'r'}, 600_000)
	for v := int16(3); v <= kmsg.NewPtrProduceRequest().MaxVersion(); v++ {
		req := produceRequest(v, records, records)
		body := req.AppendTo(nil)
		bound, err := produceDecodeBound(body, v)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if bound > 4<<10 {
			t.Errorf("v%d: two 600 KB batches bound to %d bytes", v, bound)
		}
		if got := leastDecode(func() message { return kmsg.NewPtrProduceRequest() }, v, body); uint64(bound)*raceAllocFactor < got {
			t.Errorf("v%d: bound %d, decoding allocated %d", v, bound, got)
		}
	}
}

// The bound covers what decoding allocates for the densest bodies kmsg
// accepts (amp_test.go's probes), at every version, and a body it cannot
// walk is one kmsg refuses too.
func TestProduceDecodeBoundCoversDecode(t *testing.T) {
	mk := func() message { return kmsg.NewPtrProduceRequest() }
	for v := int16(3); v <= kmsg.NewPtrProduceRequest().MaxVersion(); v++ {
		for _, b := range ampBodies(mk, v, 64<<10) {
			bound, err := produceDecodeBound(b.body, v)
			if err != nil {
				m := mk()
				m.SetVersion(v)
				if m.ReadFrom(b.body) == nil {
					t.Errorf("v%d %s %s: refused (%v), but kmsg decodes it", v, b.kind, b.path, err)
				}
				continue
			}
			if got := leastDecode(mk, v, b.body); uint64(bound)*raceAllocFactor < got {
				t.Errorf("v%d %s %s: bound %d, decoding allocated %d (%d bytes)", v, b.kind, b.path, bound, got, len(b.body))
			}
		}
	}
}

// FuzzProduceDecodeBound: for any body, the bound is at least what
// decoding allocates, or the body is one kmsg does not decode.
func FuzzProduceDecodeBound(f *testing.F) {
	for _, v := range []int16{3, 8, 9, 12, 13} {
		f.Add(v, produceRequest(v, []byte("records"), nil).AppendTo(nil))
	}
	f.Fuzz(func(t *testing.T, v int16, body []byte) {
		if v < 3 || v > kmsg.NewPtrProduceRequest().MaxVersion() {
			return
		}
		mk := func() message { return kmsg.NewPtrProduceRequest() }
		bound, err := produceDecodeBound(body, v)
		m := mk()
		m.SetVersion(v)
		decodes := m.ReadFrom(body) == nil
		if err != nil {
			if decodes {
				t.Fatalf("v%d: refused (%v), but kmsg decodes it", v, err)
			}
			return
		}
		if got := leastDecode(mk, v, body); uint64(bound)*raceAllocFactor < got {
			t.Fatalf("v%d: bound %d, decoding allocated %d", v, bound, got)
		}
	})
}

// leastDecode is the least of three measureDecode runs: the process
// allocates a few kilobytes now and then by itself.
func leastDecode(mk func() message, version int16, body []byte) uint64 {
	least := measureDecode(mk, version, body)
	for range 2 {
		least = min(least, measureDecode(mk, version, body))
	}
	return least
}
