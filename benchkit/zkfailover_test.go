package benchkit

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/internal/zookeeper"
)

// A zk-mode controller failover at a small size: the successor is
// another broker at the next epoch, it read every seeded partition's
// znode, and pushed something before it answered CreateTopics.
func TestZkFailoverMeasuresTheSuccessor(t *testing.T) {
	if _, err := zookeeper.Find(); err != nil {
		t.Skip(err)
	}
	s, _ := cluster.ProfileSettings(cluster.ProfileFast)
	ss, err := runZkFailover(context.Background(), s, t.TempDir(), 50, 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := ss[0]
	if got.NewController == got.OldController || got.NewEpoch < 2 || got.Reads < 50 || got.Pushed <= 0 ||
		got.KillToElected <= 0 || got.ElectedToCreate < got.ElectedToManaged {
		t.Fatalf("sample: %+v", got)
	}
}

// The table names each mode and size, and the plot is an SVG with one
// bar a result.
func TestControllerFailoverTableAndPlot(t *testing.T) {
	rs := []ControllerFailover{
		{Mode: ModeZK, Profile: "kafka", Partitions: 1000, Rounds: 1, ElectedToCreate: Spread{N: 1, P50: 900 * time.Millisecond}, Reads: 1005, Pushed: 349000},
		{Mode: ModeKRaft, Profile: "kafka", Partitions: 1000, Rounds: 1, ElectedToCreate: Spread{N: 1, P50: 28 * time.Millisecond}},
	}
	var tab bytes.Buffer
	if err := WriteControllerFailoverTable(&tab, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"zk", "kraft", "1005", "349.0 KB", "900ms", "28.0ms", "503 s with ZooKeeper"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tab.String())
		}
	}
	var svg bytes.Buffer
	if err := WriteControllerFailoverPlot(&svg, rs); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg.Bytes(), new(any)); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if n := strings.Count(svg.String(), `<rect x=`); n != 2+2 {
		t.Errorf("%d rects, want a bar a result and a key a mode", n)
	}
}
