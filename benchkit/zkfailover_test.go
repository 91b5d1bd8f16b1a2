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
// znode, and pushed something before it answered CreateTopics. Then a
// broker other than the controller, leading partitions, is let go.
func TestZkFailoverMeasuresTheSuccessor(t *testing.T) {
	if _, err := zookeeper.Find(); err != nil {
		t.Skip(err)
	}
	s, _ := cluster.ProfileSettings(cluster.ProfileFast)
	ss, sh, err := runZkFailover(context.Background(), s, t.TempDir(), 50, 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := ss[0]
	if got.NewController == got.OldController || got.NewEpoch < 2 || got.Reads < 50 || got.Pushed <= 0 ||
		got.KillToElected <= 0 || got.ElectedToCreate < got.ElectedToManaged {
		t.Fatalf("sample: %+v", got)
	}
	checkShutdown(t, sh, got.NewController)
}

// A KRaft controller failover at a small size, then a controlled
// shutdown of the broker leading the most partitions.
func TestKRaftFailoverAndControlledShutdown(t *testing.T) {
	s, _ := cluster.ProfileSettings(cluster.ProfileFast)
	cfg := MetadataConfig{Profile: "fast", Settings: s, FailoverBrokers: 3, FailoverRounds: 1, FailoverShutdown: true, Dir: t.TempDir()}
	mf, err := runMetaFailover(context.Background(), cfg, 50, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Rounds != 1 || mf.Samples[0].NewController == mf.Samples[0].OldController {
		t.Fatalf("failover: %+v", mf)
	}
	checkShutdown(t, mf.Shutdown, -1)
}

func checkShutdown(t *testing.T, sh ControlledShutdownSample, controller int32) {
	t.Helper()
	if sh.Broker < 101 || sh.Broker == controller || sh.Led == 0 || sh.InISR < sh.Led || sh.Took <= 0 {
		t.Fatalf("controlled shutdown: %+v", sh)
	}
}

// The table names each mode and size, and the plot is an SVG with one
// bar a result.
func TestControllerFailoverTableAndPlot(t *testing.T) {
	rs := []ControllerFailover{
		{Mode: ModeZK, Profile: "kafka", Partitions: 1000, Rounds: 1, ElectedToCreate: Spread{N: 1, P50: 900 * time.Millisecond}, Reads: 1005, Pushed: 349000},
		{Mode: ModeKRaft, Profile: "kafka", Partitions: 1000, Rounds: 1, ElectedToCreate: Spread{N: 1, P50: 28 * time.Millisecond},
			Shutdown: ControlledShutdownSample{Broker: 102, Led: 334, InISR: 1000, Took: 2100 * time.Millisecond}},
	}
	var tab bytes.Buffer
	if err := WriteControllerFailoverTable(&tab, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"zk", "kraft", "1005", "349.0 KB", "900ms", "28.0ms", "503 s with ZooKeeper", "PENDING→LET GO", "334", "2.10s"} {
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
