package control

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The trace crosses the socket with its window; a bad window is the
// client's fault.
func TestTraceRoute(t *testing.T) {
	now := time.Now()
	msgs := []view.TraceMessage{
		{Seq: 1, From: 2, To: 1, API: "Fetch", Direction: view.MessageRequest, SentUs: now.Add(-time.Hour).UnixMicro(), State: view.TraceDelivered, Label: "40"},
		{Seq: 2, From: 2, To: 1, API: "Fetch", Direction: view.MessageRequest, SentUs: now.UnixMicro(), State: view.TraceInFlight, HeldID: 7, Label: "41"},
		{Seq: 3, From: 1, To: 2, API: "Vote", Direction: view.MessageResponse, SentUs: now.UnixMicro(), State: view.TraceDelivered, Label: "✓",
			Fields: []view.MessageField{{Name: "granted", Value: "true"}}},
	}
	s := serveModel(t, NewServer, clustertest.Options{Trace: msgs})
	ctx := context.Background()
	tr, err := s.client.Trace(ctx, cluster.TraceQuery{})
	if err != nil || len(tr.Messages) != 3 || tr.Recorded != 3 || len(tr.Nodes) != 4 {
		t.Fatalf("trace = %+v, %v", tr, err)
	}
	if m := tr.Messages[2]; m.Label != "✓" || len(m.Fields) != 1 || m.Direction != view.MessageResponse {
		t.Fatalf("a message crossed as %+v", m)
	}
	tr, err = s.client.Trace(ctx, cluster.TraceQuery{Since: time.Minute})
	if err != nil || len(tr.Messages) != 2 || tr.Messages[0].HeldID != 7 {
		t.Fatalf("trace of the last minute = %+v, %v", tr.Messages, err)
	}
	tr, err = s.client.Trace(ctx, cluster.TraceQuery{Last: 1})
	if err != nil || len(tr.Messages) != 1 || tr.Messages[0].Seq != 3 {
		t.Fatalf("trace of the last message = %+v, %v", tr.Messages, err)
	}
	if _, err := s.client.Trace(ctx, cluster.TraceQuery{Last: -2}); !errors.Is(err, cluster.ErrBadAction) {
		t.Errorf("last -2 = %v, want a bad action", err)
	}
	for _, q := range []string{"last=x", "sinceMs=1e3", "sinceMs=99999999999999999", "last=99999999999"} {
		if code, msg := s.raw(t, http.MethodGet, "/v1/trace?"+q, ""); code != http.StatusBadRequest || msg == "" {
			t.Errorf("%s: %d %q, want 400 with a reason", q, code, msg)
		}
	}
}
