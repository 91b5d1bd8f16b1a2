package controller

import (
	"math"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func allocate(id int32, epoch int64) *kmsg.AllocateProducerIDsRequest {
	r := kmsg.NewPtrAllocateProducerIDsRequest()
	r.BrokerID, r.BrokerEpoch = id, epoch
	return r
}

// TestAllocateProducerIdsHandsOutConsecutiveBlocks: blocks of 1000 from
// 0, never one id twice whichever broker asks, each written as a
// ProducerIdsRecord naming the broker and the next id.
func TestAllocateProducerIdsHandsOutConsecutiveBlocks(t *testing.T) {
	h, epochs := cluster(t, 2, Config{})
	for i, id := range []int32{101, 102, 101} {
		resp := h.do(allocate(id, epochs[id])).(*kmsg.AllocateProducerIDsResponse)
		if resp.ErrorCode != 0 || resp.ProducerIDStart != int64(i)*1000 || resp.ProducerIDLen != 1000 {
			t.Fatalf("allocation %d to broker %d: %+v, want ids %d-%d", i, id, resp, i*1000, i*1000+999)
		}
	}
	if got := h.image().ProducerIds().NextProducerID(); got != 3000 {
		t.Fatalf("committed next producer id = %d, want 3000", got)
	}
	recs := h.records()
	last, ok := recs[len(recs)-1].(*record.ProducerIdsRecord)
	if !ok || *last != (record.ProducerIdsRecord{BrokerID: 101, BrokerEpoch: epochs[101], NextProducerID: 3000}) {
		t.Fatalf("last record %+v, want broker 101's ProducerIdsRecord to 3000", recs[len(recs)-1])
	}
}

// TestAllocateProducerIdsRefusals: an unknown broker or a stale epoch is
// STALE_BROKER_EPOCH, and a block past int64 is refused; none writes.
func TestAllocateProducerIdsRefusals(t *testing.T) {
	h, epochs := cluster(t, 1, Config{})
	for _, tc := range []struct {
		name string
		req  *kmsg.AllocateProducerIDsRequest
		want *kerr.Error
	}{
		{"unknown broker", allocate(999, 5), kerr.StaleBrokerEpoch},
		{"stale epoch", allocate(101, epochs[101]-1), kerr.StaleBrokerEpoch},
	} {
		if resp := h.do(tc.req).(*kmsg.AllocateProducerIDsResponse); resp.ErrorCode != tc.want.Code {
			t.Fatalf("%s: error %d, want %s", tc.name, resp.ErrorCode, tc.want.Message)
		}
	}
	if got := h.image().ProducerIds().NextProducerID(); got != -1 {
		t.Fatalf("refusals moved the next producer id to %d", got)
	}
	h.commitRecords([]record.Record{&record.ProducerIdsRecord{BrokerID: 101, NextProducerID: math.MaxInt64 - 1000}})
	h.sync()
	if resp := h.do(allocate(101, epochs[101])).(*kmsg.AllocateProducerIDsResponse); resp.ErrorCode != 0 || resp.ProducerIDStart != math.MaxInt64-1000 {
		t.Fatalf("the last whole block: %+v", resp)
	}
	if resp := h.do(allocate(101, epochs[101])).(*kmsg.AllocateProducerIDsResponse); resp.ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("past int64: error %d, want UNKNOWN_SERVER_ERROR", resp.ErrorCode)
	}
}

// TestAllocateProducerIdsAnswersOnceCommitted: the block is not handed
// out before its record commits (a broker must not use ids that a new
// controller could hand out again), yet the next request already sees it.
func TestAllocateProducerIdsAnswersOnceCommitted(t *testing.T) {
	h := heldCluster(t)
	epoch := h.image().Cluster().Broker(101).Epoch
	ch := h.send(allocate(101, epoch))
	h.sync()
	select {
	case r := <-ch:
		t.Fatalf("answered before its record committed: %+v", r)
	default:
	}
	next := h.send(allocate(101, epoch))
	h.sync()
	h.commit(false)
	if r := h.wait(ch).(*kmsg.AllocateProducerIDsResponse); r.ErrorCode != 0 || r.ProducerIDStart != 0 {
		t.Fatalf("first: %+v", r)
	}
	if r := h.wait(next).(*kmsg.AllocateProducerIDsResponse); r.ErrorCode != 0 || r.ProducerIDStart != 1000 {
		t.Fatalf("second, asked while the first was pending: %+v", r)
	}
}
