package engine

import (
	"testing"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Each API's label is the field that matters, as Summarize names it; an
// error wins, and a message not summarised has none.
func TestTraceLabel(t *testing.T) {
	f := func(kv ...string) []wire.Field {
		var out []wire.Field
		for i := 0; i < len(kv); i += 2 {
			out = append(out, wire.Field{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	req, resp := wire.DirRequest, wire.DirResponse
	for _, c := range []struct {
		key    kmsg.Key
		dir    wire.Direction
		fields []wire.Field
		want   string
	}{
		{kmsg.Fetch, req, f("replica", "2", "fetch offset", "41", "last fetched epoch", "1"), "41"},
		{kmsg.Fetch, req, f("replica", "101", "orders-0 fetch offset", "5", "orders-1 fetch offset", "7", "more partitions", "3"), "5 partitions"},
		{kmsg.Fetch, resp, f("high watermark", "41", "records", "0", "record bytes", "0"), "HWM 41"},
		{kmsg.Fetch, resp, f("high watermark", "41", "records", "2", "record bytes", "180"), "HWM 41 +2"},
		{kmsg.Fetch, resp, f("high watermark", "9", "records", "0", "diverging epoch", "3", "diverging end offset", "7"), "HWM 9 diverging"},
		{kmsg.Fetch, resp, f("error", "NOT_LEADER_OR_FOLLOWER"), "NOT_LEADER_OR_FOLLOWER"},
		{kmsg.Fetch, resp, f("orders-0 error", "FENCED_LEADER_EPOCH", "orders-0 high watermark", "-1"), "FENCED_LEADER_EPOCH"},
		{kmsg.Vote, req, f("candidate", "2", "candidate epoch", "5", "last offset", "9"), "epoch 5"},
		{kmsg.Vote, req, f("pre-vote", "true", "candidate", "2", "candidate epoch", "5"), "pre epoch 5"},
		{kmsg.Vote, resp, f("granted", "true", "leader", "-1", "epoch", "5"), "✓"},
		{kmsg.Vote, resp, f("granted", "false", "leader", "1", "epoch", "5"), "✗"},
		{kmsg.BeginQuorumEpoch, req, f("leader", "2", "epoch", "5"), "leader 2 epoch 5"},
		{kmsg.EndQuorumEpoch, req, f("leader", "2", "epoch", "5"), "epoch 5"},
		{kmsg.BrokerHeartbeat, req, f("broker", "101", "broker epoch", "9", "metadata offset", "57", "wants fence", "false"), "offset 57"},
		{kmsg.BrokerHeartbeat, resp, f("caught up", "true", "fenced", "false"), "unfenced"},
		{kmsg.BrokerHeartbeat, resp, f("caught up", "true", "fenced", "true"), "fenced"},
		{kmsg.AlterPartition, req, f("broker", "101", "broker epoch", "9", "new ISR", "[101 102]"), "new ISR [101 102]"},
		{kmsg.AlterPartition, resp, f("ISR", "[101 102]", "leader", "101"), "ISR [101 102]"},
		{kmsg.FetchSnapshot, req, f("replica", "3", "snapshot", "end offset 9 epoch 1", "position", "0"), "position 0"},
		{kmsg.FetchSnapshot, resp, f("snapshot", "end offset 9 epoch 1", "size", "900", "position", "0", "bytes", "900"), "900 bytes"},
		{kmsg.BeginQuorumEpoch, resp, f("leader", "2", "epoch", "5"), ""},
		{kmsg.Fetch, req, nil, ""},
		{kmsg.CreateTopics, req, f("x", "y"), ""},
	} {
		if got := traceLabel(c.key, c.dir, c.fields); got != c.want {
			t.Errorf("%s %v %v: label %q, want %q", kmsg.NameForKey(int16(c.key)), c.dir, c.fields, got, c.want)
		}
	}
}
