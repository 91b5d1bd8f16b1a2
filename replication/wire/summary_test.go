package wire

import (
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func requestFrame(req kmsg.Request) []byte { return appendRequest(nil, req, 7, "kraftlab-node-2")[4:] }

func responseFrame(resp kmsg.Response) []byte { return appendResponse(nil, resp, 7)[4:] }

// recordBatch is a v2 batch header claiming n records, followed by body.
func recordBatch(n int32, body []byte) []byte {
	b := kmsg.RecordBatch{Magic: 2, NumRecords: n, Records: body, Length: int32(49 + len(body))}
	return b.AppendTo(nil)
}

func fieldsOf(t *testing.T, dir Direction, key, version int16, frame []byte) map[string]string {
	t.Helper()
	f, err := Summarize(dir, key, version, frame)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	m := make(map[string]string)
	for _, x := range f {
		m[x.Name] = x.Value
	}
	return m
}

func heldFetchRequest() *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 17
	req.ReplicaState.ID = 2
	t := kmsg.NewFetchRequestTopic()
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset, p.LastFetchedEpoch = 120, 3
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func heldFetchResponse() *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 17
	t := kmsg.NewFetchResponseTopic()
	p := kmsg.NewFetchResponseTopicPartition()
	p.HighWatermark = 123
	p.RecordBatches = append(recordBatch(2, []byte("abcdef")), recordBatch(3, []byte("xyz"))...)
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

func TestSummarizeFetch(t *testing.T) {
	req := heldFetchRequest()
	got := fieldsOf(t, DirRequest, 1, 17, requestFrame(req))
	if got["replica"] != "2" || got["fetch offset"] != "120" || got["last fetched epoch"] != "3" {
		t.Errorf("Fetch request: %v", got)
	}
	resp := heldFetchResponse()
	batches := len(resp.Topics[0].Partitions[0].RecordBatches)
	got = fieldsOf(t, DirResponse, 1, 17, responseFrame(resp))
	if got["high watermark"] != "123" || got["records"] != "5" || got["record bytes"] != strconv.Itoa(batches) || got["diverging epoch"] != "" {
		t.Errorf("Fetch response: %v", got)
	}
	resp.Topics[0].Partitions[0].DivergingEpoch.Epoch = 4
	resp.Topics[0].Partitions[0].DivergingEpoch.EndOffset = 90
	resp.Topics[0].Partitions[0].RecordBatches = nil
	got = fieldsOf(t, DirResponse, 1, 17, responseFrame(resp))
	if got["diverging epoch"] != "4" || got["diverging end offset"] != "90" || got["records"] != "0" {
		t.Errorf("diverging Fetch response: %v", got)
	}
	// A batch whose length runs past the bytes is not counted.
	resp.Topics[0].Partitions[0].RecordBatches = recordBatch(9, []byte("abc"))[:60]
	got = fieldsOf(t, DirResponse, 1, 17, responseFrame(resp))
	if got["records"] != "0" {
		t.Errorf("truncated batch counted: %v", got)
	}
}

func TestSummarizeQuorumAndBrokerAPIs(t *testing.T) {
	got := fieldsOf(t, DirRequest, 52, 2, requestFrame(voteRequest(5, true)))
	if got["pre-vote"] != "true" || got["candidate epoch"] != "5" || got["last offset"] != "100" || got["last offset epoch"] != "4" {
		t.Errorf("Vote request: %v", got)
	}
	hb := kmsg.NewPtrBrokerHeartbeatRequest()
	hb.Version, hb.BrokerID, hb.BrokerEpoch, hb.CurrentMetadataOffset, hb.WantFence = 1, 4, 77, 310, true
	got = fieldsOf(t, DirRequest, 63, 1, requestFrame(hb))
	if got["broker"] != "4" || got["broker epoch"] != "77" || got["metadata offset"] != "310" || got["wants fence"] != "true" {
		t.Errorf("BrokerHeartbeat request: %v", got)
	}
	hr := kmsg.NewPtrBrokerHeartbeatResponse()
	hr.Version, hr.IsFenced = 1, true
	got = fieldsOf(t, DirResponse, 63, 1, responseFrame(hr))
	if got["fenced"] != "true" || got["caught up"] != "false" {
		t.Errorf("BrokerHeartbeat response: %v", got)
	}
	// Other APIs are named only.
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	if f, err := Summarize(DirRequest, 3, 12, requestFrame(md)); err != nil || len(f) != 0 {
		t.Errorf("Metadata request: %v, %v", f, err)
	}
	// A frame that is not what it says is an error, not a panic.
	if _, err := Summarize(DirRequest, 1, 17, requestFrame(voteRequest(1, false))); err == nil {
		t.Error("a Vote frame summarised as Fetch")
	}
	if _, err := Summarize(DirResponse, 1, 17, []byte{0, 0, 0, 7, 0, 1}); err == nil {
		t.Error("a truncated Fetch response summarised")
	}
}

// The summariser reads frames it did not write (a held response comes
// from another node): whatever the bytes, it returns, bounded by them.
func FuzzSummarize(f *testing.F) {
	f.Add(uint8(DirRequest), int16(1), int16(17), requestFrame(heldFetchRequest()))
	f.Add(uint8(DirResponse), int16(1), int16(17), responseFrame(heldFetchResponse()))
	f.Add(uint8(DirRequest), int16(52), int16(2), requestFrame(voteRequest(3, false)))
	hb := kmsg.NewPtrBrokerHeartbeatRequest()
	hb.Version = 1
	f.Add(uint8(DirRequest), int16(63), int16(1), requestFrame(hb))
	ap := kmsg.NewPtrAlterPartitionResponse()
	ap.Version = 3
	f.Add(uint8(DirResponse), int16(56), int16(3), responseFrame(ap))
	fs := kmsg.NewPtrFetchSnapshotResponse()
	fs.Version = 1
	f.Add(uint8(DirResponse), int16(59), int16(1), responseFrame(fs))
	f.Fuzz(func(t *testing.T, dir uint8, key, version int16, frame []byte) {
		fields, err := Summarize(Direction(dir), key, version, frame)
		if err != nil && fields != nil {
			t.Fatalf("fields %v with error %v", fields, err)
		}
		if len(fields) > maxSummaryFields+1 {
			t.Fatalf("%d fields from a %d-byte frame", len(fields), len(frame))
		}
	})
}
