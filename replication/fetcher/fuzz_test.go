package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Whatever a leader answers, the thread neither panics nor lets its fetch
// offset part from the replica's log end.
func FuzzFetchResponse(f *testing.F) {
	tp := TopicPartition{"orders", 0}
	seed := func(edit func(*kmsg.FetchResponseTopicPartition)) []byte {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = DefaultFetchVersion
		rt := kmsg.NewFetchResponseTopic()
		rt.TopicID = topicID(tp.Topic)
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.HighWatermark = 3
		rp.RecordBatches = storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: 2, LeaderEpoch: 1},
			[]storage.Record{{Offset: 2, Value: []byte("x")}, {Offset: 3, Value: []byte("y")}})
		edit(&rp)
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp.AppendTo(nil)
	}
	f.Add(seed(func(*kmsg.FetchResponseTopicPartition) {}))
	f.Add(seed(func(rp *kmsg.FetchResponseTopicPartition) {
		rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = 0, 1
	}))
	f.Add(seed(func(rp *kmsg.FetchResponseTopicPartition) { rp.ErrorCode = kerr.OffsetOutOfRange.Code }))
	f.Add(seed(func(rp *kmsg.FetchResponseTopicPartition) { rp.ErrorCode = kerr.FencedLeaderEpoch.Code }))
	f.Add(seed(func(rp *kmsg.FetchResponseTopicPartition) { rp.RecordBatches = rp.RecordBatches[:20] }))
	f.Fuzz(func(t *testing.T, raw []byte) {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = DefaultFetchVersion
		if resp.ReadFrom(raw) != nil {
			return
		}
		th := bareThread(t, Config{})
		th.cfg.Send = func(context.Context, int32, kmsg.Request) (kmsg.Response, error) { return resp, nil }
		fl := newFollower(t)
		appendRecords(t, fl.log, 0, 1)
		appendRecords(t, fl.log, 1, 1)
		th.m.AddPartitions(map[TopicPartition]InitialFetchState{tp: {Leader: 1, LeaderEpoch: 1, TopicID: topicID(tp.Topic), Replica: fl, InitOffset: -1}})
		rf := th.m.BuildFetch(time.Now())
		if rf == nil {
			t.Fatal("no fetch")
		}
		th.processFetchRequest(rf)
		th.m.mu.Lock()
		defer th.m.mu.Unlock()
		if st, ok := th.m.parts[tp]; ok && st.FetchOffset != fl.LogEndOffset() {
			t.Fatalf("fetch offset %d, log end %d", st.FetchOffset, fl.LogEndOffset())
		}
	})
}
