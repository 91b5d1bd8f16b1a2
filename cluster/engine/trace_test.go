package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

func describeTrace(ms []view.TraceMessage) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "\n#%d %d→%d %s %s %q %s held %d", m.Seq, m.From, m.To, m.API, m.Direction, m.Label, m.State, m.HeldID)
	}
	return b.String()
}

// A real quorum's trace shows its followers' Fetch requests to the leader
// and the leader's responses, paired and labelled with the fetch offset
// and the high watermark; paused, a message waits in flight with the id
// step takes, and stepping it delivers it in the trace.
func TestRealEngineTrace(t *testing.T) {
	p := openReal(t, 3, 0, "")
	ctx := context.Background()
	v := waitCond(t, p, "leader")
	leader := v.LeaderID
	var tr view.Trace
	poll.Until(t, 15*time.Second, "a labelled Fetch round trip to the leader in the trace", func() bool {
		var err error
		if tr, err = p.Trace(ctx, cluster.TraceQuery{}); err != nil {
			t.Fatal(err)
		}
		return pairedFetch(tr.Messages, leader) != nil
	}, func() string { return describeTrace(tr.Messages) })
	pair := pairedFetch(tr.Messages, leader)
	req, resp := pair[0], pair[1]
	if _, err := strconv.ParseInt(req.Label, 10, 64); err != nil || len(req.Fields) == 0 {
		t.Fatalf("a Fetch request labelled %q, fields %+v: want its fetch offset", req.Label, req.Fields)
	}
	if !strings.HasPrefix(resp.Label, "HWM ") || resp.SentOrder <= req.EndOrder || resp.DeliveredUs < req.SentUs {
		t.Fatalf("Fetch response %+v to request %+v", resp, req)
	}
	if len(tr.Nodes) != 3 || tr.Capacity != 4096 || tr.Recorded < uint64(len(tr.Messages)) {
		t.Fatalf("trace of %d messages: nodes %+v, capacity %d, recorded %d", len(tr.Messages), tr.Nodes, tr.Capacity, tr.Recorded)
	}
	if v := p.View(); len(v.Trace) == 0 || len(v.Trace) > view.MaxViewTrace || v.Trace[len(v.Trace)-1].Fields != nil {
		t.Fatalf("the view carries %d traced messages: %s", len(v.Trace), describeTrace(v.Trace))
	}

	do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockPause})
	defer p.Do(ctx, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockResume})
	var held view.Message
	poll.Until(t, 15*time.Second, "a message held", func() bool {
		if ms := p.View().Messages; len(ms) > 0 {
			held = ms[0]
			return true
		}
		// The followers' Fetches may wait parked at the leader: time
		// moved by hand ends their wait.
		do(t, p, cluster.Action{Kind: cluster.ActClock, Clock: cluster.ClockAdvance, AdvanceMs: 50})
		return false
	})
	inFlight := func() *view.TraceMessage {
		tr, _ = p.Trace(ctx, cluster.TraceQuery{})
		for i, m := range tr.Messages {
			if m.HeldID == held.ID {
				return &tr.Messages[i]
			}
		}
		return nil
	}
	m := inFlight()
	if m == nil || m.State != view.TraceInFlight || m.DeliveredUs != 0 || m.EndOrder != 0 || m.From != held.From || m.To != held.To {
		t.Fatalf("held %+v is in the trace as %+v", held, m)
	}
	do(t, p, cluster.Action{Kind: cluster.ActStep, MessageID: held.ID})
	poll.Until(t, 10*time.Second, "the stepped message delivered in the trace", func() bool {
		m := inFlight()
		return m != nil && m.State == view.TraceDelivered && m.EndOrder > m.SentOrder
	}, func() string { return describeTrace(tr.Messages) })
}

// pairedFetch finds a delivered Fetch request to leader and its delivered
// response.
func pairedFetch(ms []view.TraceMessage, leader int32) []view.TraceMessage {
	for _, req := range ms {
		if req.API != "Fetch" || req.Direction != view.MessageRequest || req.To != leader || req.State != view.TraceDelivered {
			continue
		}
		for _, resp := range ms {
			if resp.Direction == view.MessageResponse && resp.Conn == req.Conn && resp.CorrelationID == req.CorrelationID &&
				resp.State == view.TraceDelivered && resp.Label != "" {
				return []view.TraceMessage{req, resp}
			}
		}
	}
	return nil
}
