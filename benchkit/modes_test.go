package benchkit

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

// Both modes commit on one engine, the quorum's messages are counted on
// the wire, and observers add to them: each is sent every record, by the
// leader under push, by its own fetches under pull.
func TestModesCountTheQuorumsMessages(t *testing.T) {
	modes, obs, err := ParseModes("pull,push", "0,2")
	if err != nil {
		t.Fatal(err)
	}
	cfg := ModesConfig{Modes: modes, Observers: obs, Sizes: []int{256}, Writers: []int{1}, Warmup: 100 * time.Millisecond, Window: 300 * time.Millisecond, Dir: t.TempDir()}
	rs, err := RunModes(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d results, want 4: %+v", len(rs), rs)
	}
	per := map[string]map[int]float64{}
	for _, r := range rs {
		if r.Error != "" || r.Records == 0 || r.CPUSecondsPerRecord == nil && cpuKnown() {
			t.Fatalf("%s with %d observers: %+v", r.Mode, r.Observers, r)
		}
		// One writer: the stamps split most commits into their legs.
		if l := r.Legs; l == nil || l.Split < l.Commits/2 || l.Commits == 0 || r.Mode == "push" && l.WaitFetch != 0 {
			t.Errorf("%s with %d observers: legs %+v", r.Mode, r.Observers, r.Legs)
		}
		if !profiling() {
			// The leader works for every record; the observers only when
			// there are some.
			if r.LeaderCPUSecondsPerRecord == nil || *r.LeaderCPUSecondsPerRecord <= 0 || (r.ObserversCPUSecondsPerRecord != nil) != (r.Observers > 0) {
				t.Errorf("%s with %d observers: leader %v, observers %v CPU s/record", r.Mode, r.Observers, r.LeaderCPUSecondsPerRecord, r.ObserversCPUSecondsPerRecord)
			}
		}
		// At least a request and a response to each of two followers for
		// every commit of one writer.
		if r.MessagesPerRecord < 4 || r.BytesPerRecord < 256 {
			t.Errorf("%s with %d observers: %.2f messages and %.0f bytes per record", r.Mode, r.Observers, r.MessagesPerRecord, r.BytesPerRecord)
		}
		if per[r.Mode] == nil {
			per[r.Mode] = map[int]float64{}
		}
		per[r.Mode][r.Observers] = r.MessagesPerRecord
	}
	for _, m := range []raft.Replication{raft.Pull, raft.Push} {
		if p := per[m.String()]; p[2] <= p[0] {
			t.Errorf("%s: 2 observers cost no messages: %.2f per record with them, %.2f without", m, p[2], p[0])
		}
	}
	var b bytes.Buffer
	if err := WriteModesTable(&b, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"msgs/record", "msgs/record  CPU µs/record: leader  follower  observers  process", "  pull          2        1", "  push          0        1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if _, _, err := ParseModes("pull,gossip", "0"); err == nil || !strings.Contains(err.Error(), `"gossip" is neither pull nor push`) {
		t.Errorf("ParseModes of gossip: %v", err)
	}
}

// profiling says whether go test runs a CPU profile of its own, which
// leaves none for the per-node split.
func profiling() bool {
	f := flag.Lookup("test.cpuprofile")
	return f != nil && f.Value.String() != ""
}

// cpuKnown says whether this platform measures the process's CPU.
func cpuKnown() bool {
	_, ok := cpuTime()
	return ok
}
