package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

// kraftlab metadata lists a directory as ls does, prints a file as cat
// does, and names the missing part of a path with what its parent holds.
func TestMetadataBrowse(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("topics", "create", "orders", "--partitions", "2")
	expectRun(t, "topics create", code, out, errOut, ExitOK)

	code, out, errOut = h.run("metadata")
	expectRun(t, "metadata /", code, out, errOut, ExitOK)
	if out != "image\n" {
		t.Errorf("metadata /: %q, want the root's one child", out)
	}
	code, out, errOut = h.run("metadata", "/image")
	expectRun(t, "metadata /image", code, out, errOut, ExitOK, "cluster\nconfigs\nfeatures\nproducerIds\nprovenance\ntopics\n")
	code, out, errOut = h.run("metadata", "/image/topics/byName/orders/1", "--node", "101")
	expectRun(t, "metadata partition file", code, out, errOut, ExitOK, "PartitionRegistration(replicas=[101]", "leader=101")
	code, out, errOut = h.run("metadata", "/image/features/metadataVersion")
	expectRun(t, "metadata metadataVersion", code, out, errOut, ExitOK, "Optional[4.4-IV2]")

	code, out, errOut = h.run("metadata", "/image/topics/byName/nope/0")
	expectRun(t, "metadata missing", code, out, errOut, ExitUsage, "no metadata path /image/topics/byName/nope/0: /image/topics/byName has no nope; it holds: orders")
	code, out, errOut = h.run("metadata", "/image/provenance/x")
	expectRun(t, "metadata below a file", code, out, errOut, ExitUsage, "/image/provenance is a file")
	code, out, errOut = h.run("metadata", "--node", "nobody")
	expectRun(t, "metadata bad node", code, out, errOut, ExitUsage, `--node: bad node "nobody"`)
	code, out, errOut = h.run("metadata", "a", "b")
	expectRun(t, "metadata two paths", code, out, errOut, ExitUsage, "takes at most one PATH")

	code, out, errOut = h.run("metadata", "/image/topics/byName", "--json")
	expectRun(t, "metadata --json", code, out, errOut, ExitOK)
	var e cluster.MetadataEntry
	if err := json.Unmarshal([]byte(out), &e); err != nil || !e.Directory || e.Path != "/image/topics/byName" || len(e.Children) != 1 || e.Children[0] != "orders" {
		t.Errorf("metadata --json: %v %+v", err, e)
	}

	if _, out, _ := h.run("__complete", "metadata", "--node", ""); !strings.Contains(out, "101\tbroker, running") || !strings.Contains(out, "leader\t") {
		t.Errorf("--node completion: %q", out)
	}
	code, out, errOut = h.run("kill", "101")
	expectRun(t, "kill 101", code, out, errOut, ExitOK)
	code, out, errOut = h.run("metadata", "--node", "101")
	expectRun(t, "metadata of a killed node", code, out, errOut, ExitUsage, "node 101 is killed", "kraftlab start 101")
	code, out, errOut = h.run("metadata", "/image/cluster/brokers/101")
	expectRun(t, "a killed broker is fenced", code, out, errOut, ExitOK, "fenced=true")
}

// kraftlab metadata log prints the records as kafka-dump-log does, and
// --json carries the same batches.
func TestMetadataLogOfTheModel(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("topics", "create", "orders")
	expectRun(t, "topics create", code, out, errOut, ExitOK)
	code, out, errOut = h.run("metadata", "log")
	expectRun(t, "metadata log", code, out, errOut, ExitOK, "Node 1's metadata log: log start 0, log end 4, high watermark 4",
		"baseOffset: 0 lastOffset: 0 count: 1", `"type":"FEATURE_LEVEL_RECORD"`, `"type":"TOPIC_RECORD","version":0,"data":{"name":"orders"`)
	code, out, errOut = h.run("metadata", "log", "--from", "2", "--json")
	expectRun(t, "metadata log --json", code, out, errOut, ExitOK)
	var l cluster.MetadataLog
	if err := json.Unmarshal([]byte(out), &l); err != nil || l.From != 2 || len(l.Dump.Batches) != 1 || l.Dump.Batches[0].Records[0].Type != "TOPIC_RECORD" {
		t.Errorf("metadata log --from 2 --json: %v %+v", err, l)
	}
	for _, args := range [][]string{{"--from", "-1"}, {"--max-bytes", "0"}, {"--max-bytes", "999999999"}, {"extra"}} {
		code, out, errOut = h.run(append([]string{"metadata", "log"}, args...)...)
		expectRun(t, "metadata log "+strings.Join(args, " "), code, out, errOut, ExitUsage)
	}
}

// Against a real playground: a broker's image holds the topic once it
// applied it, the active controller's log holds the records that made it,
// and after a snapshot the log says where it starts and why.
func TestMetadataOfARealPlayground(t *testing.T) {
	h := newHarness(t)
	h.serveReal("default", 3, 1)
	code, out, errOut := h.run("wait", "unfenced", "101", "--timeout", "60s")
	expectRun(t, "wait unfenced 101", code, out, errOut, ExitOK)
	code, out, errOut = h.run("topics", "create", "orders")
	expectRun(t, "topics create", code, out, errOut, ExitOK)
	code, out, errOut = h.run("wait", "topic", "orders", "on", "all", "brokers", "--timeout", "60s")
	expectRun(t, "wait topic on all brokers", code, out, errOut, ExitOK)
	code, out, errOut = h.run("metadata", "/image/topics/byName", "--node", "101")
	expectRun(t, "metadata of broker 101", code, out, errOut, ExitOK, "orders\n")
	code, out, errOut = h.run("metadata", "/image/cluster/brokers/101")
	expectRun(t, "broker 101's registration", code, out, errOut, ExitOK, "BrokerRegistration(id=101", "fenced=false")

	code, out, errOut = h.run("metadata", "log")
	expectRun(t, "metadata log", code, out, errOut, ExitOK, `"type":"REGISTER_BROKER_RECORD"`, `"type":"TOPIC_RECORD","version":0,"data":{"name":"orders"`, "LeaderChange")
	if strings.Contains(out, "The log starts at offset") {
		t.Errorf("metadata log before any snapshot says it was trimmed:\n%s", out)
	}
	code, out, errOut = h.run("snapshot", "leader")
	expectRun(t, "snapshot leader", code, out, errOut, ExitOK)
	code, out, errOut = h.run("metadata", "log", "--json")
	expectRun(t, "metadata log --json after the snapshot", code, out, errOut, ExitOK)
	var l cluster.MetadataLog
	if err := json.Unmarshal([]byte(out), &l); err != nil || l.LogStartOffset == 0 || l.LatestSnapshot == nil || l.LatestSnapshot.EndOffset != l.LogStartOffset {
		t.Fatalf("metadata log --json after a snapshot: %v %+v", err, l)
	}
	for _, b := range l.Dump.Batches {
		if b.LastOffset >= l.HighWatermark || b.LastOffset < l.LogStartOffset {
			t.Errorf("batch %d-%d printed: outside the committed log %d-%d", b.BaseOffset, b.LastOffset, l.LogStartOffset, l.HighWatermark)
		}
	}
	code, out, errOut = h.run("metadata", "log", "--from", "0")
	expectRun(t, "metadata log after the snapshot", code, out, errOut, ExitOK, "The log starts at offset", "kraftlab snapshot")
	for _, name := range []string{"a", "b"} {
		code, out, errOut = h.run("topics", "create", name)
		expectRun(t, "topics create after the snapshot", code, out, errOut, ExitOK)
	}
	code, out, errOut = h.run("metadata", "log", "--max-bytes", "1")
	expectRun(t, "metadata log of one batch", code, out, errOut, ExitOK)
	if lines := strings.Count(out, "baseOffset:"); lines != 1 || !strings.Contains(out, "More committed batches follow: kraftlab metadata log --node ") {
		t.Errorf("--max-bytes 1 printed %d batches and no way on:\n%s", lines, out)
	}
}
