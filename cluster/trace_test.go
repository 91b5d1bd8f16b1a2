package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The playground's trace is the engine's with the nodes as columns,
// windowed by count and by cluster time; a negative window is refused.
func TestPlaygroundTraceWindows(t *testing.T) {
	now := time.Now()
	var msgs []view.TraceMessage
	for i := range 10 {
		at := now.Add(time.Duration(i-9) * time.Second) // one a second, the last now
		msgs = append(msgs, view.TraceMessage{Seq: uint64(i + 1), From: 2, To: 1, API: "Fetch", SentUs: at.UnixMicro(), State: view.TraceDelivered})
	}
	cfg, err := cluster.NewConfig(3, 2, cluster.ProfileFast, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := cluster.OpenWith(context.Background(), cfg, clustertest.Start(clustertest.Options{Trace: msgs}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()

	all, err := p.Trace(ctx, cluster.TraceQuery{})
	if err != nil || len(all.Messages) != 10 || all.Recorded != 10 || all.NowUs < now.UnixMicro() {
		t.Fatalf("whole trace: %+v, %v", all, err)
	}
	want := []view.TraceNode{{ID: 1, Kind: view.KindController}, {ID: 2, Kind: view.KindController}, {ID: 3, Kind: view.KindController}, {ID: 101, Kind: view.KindBroker}, {ID: 102, Kind: view.KindBroker}}
	if len(all.Nodes) != len(want) {
		t.Fatalf("nodes %+v, want %+v", all.Nodes, want)
	}
	for i := range want {
		if all.Nodes[i] != want[i] {
			t.Fatalf("nodes %+v, want %+v", all.Nodes, want)
		}
	}
	last, _ := p.Trace(ctx, cluster.TraceQuery{Last: 3})
	if len(last.Messages) != 3 || last.Messages[0].Seq != 8 {
		t.Fatalf("last 3: %+v", last.Messages)
	}
	// The last 2.5 s of cluster time: the messages sent 2, 1 and 0 s ago.
	since, _ := p.Trace(ctx, cluster.TraceQuery{Since: 2500 * time.Millisecond})
	if len(since.Messages) != 3 || since.Messages[0].Seq != 8 {
		t.Fatalf("since 2.5s: %+v", since.Messages)
	}
	both, _ := p.Trace(ctx, cluster.TraceQuery{Since: 5500 * time.Millisecond, Last: 2})
	if len(both.Messages) != 2 || both.Messages[0].Seq != 9 {
		t.Fatalf("since 5.5s, last 2: %+v", both.Messages)
	}
	for _, q := range []cluster.TraceQuery{{Last: -1}, {Since: -time.Second}} {
		if _, err := p.Trace(ctx, q); !errors.Is(err, cluster.ErrBadAction) {
			t.Errorf("trace %+v = %v, want a bad action", q, err)
		}
	}
	if v := p.View(); len(v.Trace) != 10 {
		t.Errorf("the view carries %d traced messages, want 10", len(v.Trace))
	}
}
