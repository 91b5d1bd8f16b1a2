package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// dumpBatch is one batch line of kafka-dump-log, with its record lines.
type dumpBatch struct {
	fields  map[string]string
	records []string
}

// dumpFile is kafka-dump-log's output for one file.
type dumpFile struct {
	path    string
	header  []string // lines before the first batch ("Log starting offset: 0", "Snapshot end offset: ...")
	batches []dumpBatch
	other   []string // lines that are neither (errors, index entries)
}

var reDumpField = regexp.MustCompile(`(\w+): (\S+)`)

// parseDump splits kafka-dump-log's output by "Dumping <file>".
func parseDump(out string) map[string]*dumpFile {
	files := map[string]*dumpFile{}
	var cur *dumpFile
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Dumping "):
			cur = &dumpFile{path: strings.TrimPrefix(line, "Dumping ")}
			files[cur.path] = cur
		case cur == nil || strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "baseOffset: "):
			b := dumpBatch{fields: map[string]string{}}
			for _, m := range reDumpField.FindAllStringSubmatch(line, -1) {
				b.fields[m[1]] = m[2]
			}
			cur.batches = append(cur.batches, b)
		case strings.HasPrefix(line, "| offset: ") && len(cur.batches) > 0:
			last := &cur.batches[len(cur.batches)-1]
			last.records = append(last.records, line)
		case len(cur.batches) == 0 && !strings.HasPrefix(line, "offset: "):
			cur.header = append(cur.header, line)
		default:
			cur.other = append(cur.other, line)
		}
	}
	return files
}

// checkBatches compares Kafka's reading of a file of batches with
// kraftlab's own (storage.Batches over the same bytes): every batch, its
// offsets, epoch, control flag, position, size and CRC, all valid.
func checkBatches(t *testing.T, path string, df *dumpFile) (controls, records []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var own []storage.Batch
	if err := storage.Batches(raw, func(pos int, b *storage.Batch) error { own = append(own, *b); return nil }); err != nil {
		t.Fatalf("kraftlab cannot read its own %s: %v", path, err)
	}
	if len(own) != len(df.batches) {
		t.Errorf("%s: kraftlab reads %d batches, Kafka printed %d", filepath.Base(path), len(own), len(df.batches))
	}
	pos := 0
	for i := range min(len(own), len(df.batches)) {
		b, kb := own[i], df.batches[i].fields
		want := map[string]string{
			"baseOffset":           fmt.Sprint(b.FirstOffset),
			"lastOffset":           fmt.Sprint(b.LastOffset()),
			"count":                fmt.Sprint(b.NumRecords),
			"partitionLeaderEpoch": fmt.Sprint(b.PartitionLeaderEpoch),
			"isControl":            fmt.Sprint(b.IsControl()),
			"isTransactional":      "false",
			"position":             fmt.Sprint(pos),
			"size":                 fmt.Sprint(b.Size()),
			"magic":                "2",
			"compresscodec":        "none",
			"crc":                  fmt.Sprint(uint32(b.CRC)),
			"isvalid":              "true",
		}
		for k, v := range want {
			if kb[k] != v {
				t.Errorf("%s batch %d %s: Kafka %q, kraftlab %q", filepath.Base(path), i, k, kb[k], v)
			}
		}
		pos += b.Size()
		if len(df.batches[i].records) != int(b.NumRecords) {
			t.Errorf("%s batch at %d: Kafka printed %d records, the batch has %d", filepath.Base(path), b.FirstOffset, len(df.batches[i].records), b.NumRecords)
		}
		for _, r := range df.batches[i].records {
			_, payload, _ := strings.Cut(r, "headerKeys: [] ")
			if b.IsControl() {
				controls = append(controls, payload)
			} else {
				records = append(records, payload)
			}
		}
	}
	return controls, records
}

// countKinds summarises record payloads: "payload: {"type":"NO_OP_RECORD"...}" x N.
func countKinds(payloads []string) string {
	n := map[string]int{}
	var order []string
	for _, p := range payloads {
		key := p
		if i := strings.Index(p, `"type":"`); i >= 0 {
			key = p[i+8:]
			key = `type ` + key[:strings.IndexByte(key, '"')]
		} else if i := strings.IndexByte(p, '{'); i > 0 {
			key = strings.TrimSpace(p[:i])
		}
		if n[key] == 0 {
			order = append(order, key)
		}
		n[key]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s x%d", k, n[k]))
	}
	return strings.Join(parts, ", ")
}

// dumpedLogRecords start the records kafka-dump-log may print for the
// segments of TestDumpKraftlabLog's playground.
var dumpedLogRecords = []string{
	`payload: {"type":"NO_OP_RECORD","version":0,"data":{}}`,
	`payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version",`,
	`payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"eligible.leader.replicas.version",`,
	`payload: {"type":"CONFIG_RECORD","version":0,"data":{"resourceType":4,"resourceName":"","name":"min.insync.replicas",`,
	`payload: {"type":"REGISTER_BROKER_RECORD","version":4,"data":{"brokerId":101,`,
	`payload: {"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":0,"data":{"brokerId":101,`,
}

// TestDumpKraftlabLog runs kafka-dump-log --cluster-metadata-decoder on
// kraftlab's segments and snapshots, and on its indexes.
func TestDumpKraftlabLog(t *testing.T) {
	k := needKafka(t)
	// NoOps every 10 ms and a snapshot every ~12 KB of them (under 2 s);
	// after the first snapshot a resignation, so that the segment after
	// the snapshot holds a LeaderChange too, and 70 more NoOps, so that its
	// index gets entries (kraftlab's metadata log indexes every 256 bytes).
	// Flush always: `kraftlab down` kills the nodes (Log.Crash), which
	// under the fast profile's flush=never leaves every index empty.
	p := startPlayground(t, "--controllers", "3", "--brokers", "1", "--profile", "fast",
		"--set", "kraftlab.quorum.flush=always",
		"--set", "metadata.max.idle.interval.ms=10",
		"--set", "metadata.log.max.record.bytes.between.snapshots=12000")
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(p.MetadataDir(1), "*.checkpoint")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot after 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, args := range [][]string{{"resign"}, {"wait", "new-leader", "--timeout", "10s"}, {"wait", "hwm", ">=", "baseline+70", "--timeout", "10s"}, {"wait", "caught-up", "--timeout", "10s"}} {
		if _, err := p.Run(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}

	var logs, snaps, indexes []string
	for _, id := range []int32{1, 2, 3, 101} {
		dir := p.MetadataDir(id)
		l, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		s, _ := filepath.Glob(filepath.Join(dir, "*.checkpoint"))
		x, _ := filepath.Glob(filepath.Join(dir, "*.index"))
		logs, snaps, indexes = append(logs, l...), append(snaps, s...), append(indexes, x...)
	}
	for _, f := range []string{"quorum-state", "leader-epoch-checkpoint"} {
		b, _ := os.ReadFile(filepath.Join(p.MetadataDir(1), f))
		t.Logf("kraftlab node 1 %s:\n%s", f, indent(string(b)))
	}
	files := append(append([]string{}, logs...), snaps...)
	r := runTool(t, k, MainDumpLog, "--cluster-metadata-decoder", "--files", strings.Join(files, ","))
	if r.Err != nil {
		t.Fatalf("kafka-dump-log: %v", r.Err)
	}
	dumps := parseDump(r.Stdout)
	checkNonConsecutive(t, r.Stderr)
	leaderChanges := 0
	for _, f := range files {
		df := dumps[f]
		if df == nil {
			t.Errorf("kafka-dump-log printed nothing for %s", f)
			continue
		}
		controls, records := checkBatches(t, f, df)
		for _, o := range df.other {
			t.Errorf("%s: unexpected line from Kafka: %s", filepath.Base(f), o)
		}
		t.Logf("%s: %v; %d batches; control records: %s; records: %s", strings.TrimPrefix(f, p.DataDir+"/"), df.header, len(df.batches), countKinds(controls), countKinds(records))
		if strings.HasSuffix(f, ".log") {
			for _, c := range controls {
				if !strings.HasPrefix(c, "LeaderChange: {") {
					t.Errorf("%s: control record %s", filepath.Base(f), c)
				}
				leaderChanges++
			}
			// The playground writes NoOps, and before them, in a segment
			// no snapshot has let go of yet, the records that activate
			// the cluster and register its broker: Kafka decodes each.
			for _, rec := range records {
				if !slices.ContainsFunc(dumpedLogRecords, func(prefix string) bool { return strings.HasPrefix(rec, prefix) }) {
					t.Errorf("%s: record %s", filepath.Base(f), rec)
				}
			}
			continue
		}
		// A snapshot: "Snapshot end offset: X, epoch: Y" as its name says,
		// SnapshotHeader first and SnapshotFooter last.
		name := strings.TrimSuffix(filepath.Base(f), ".checkpoint")
		off, ep, _ := strings.Cut(name, "-")
		o, _ := strconv.ParseInt(off, 10, 64)
		e, _ := strconv.ParseInt(ep, 10, 64)
		if want := fmt.Sprintf("Snapshot end offset: %d, epoch: %d", o, e); !strings.Contains(strings.Join(df.header, "\n"), want) {
			t.Errorf("%s: Kafka's header %q, want %q", name, df.header, want)
		}
		if len(controls) < 2 || !strings.HasPrefix(controls[0], "SnapshotHeader {") || !strings.HasPrefix(controls[len(controls)-1], "SnapshotFooter {") {
			t.Errorf("%s: control records %q, want SnapshotHeader ... SnapshotFooter", name, controls)
		}
	}
	if leaderChanges == 0 {
		t.Error("no LeaderChange in the segments Kafka read")
	}

	if entries := dumpIndexes(t, k, indexes, p.DataDir); entries == 0 {
		t.Log("no index entries to check: every segment stayed under index.interval.bytes")
	}
}

// checkNonConsecutive accepts only the "Non-consecutive offsets" report
// kafka-dump-log makes for every segment whose base offset is not 0: it
// starts counting from -1 whatever the file's base offset (Kafka's own
// segments get it too).
func checkNonConsecutive(t *testing.T, stderr string) {
	t.Helper()
	file := ""
	for _, line := range strings.Split(stderr, "\n") {
		if f, ok := strings.CutPrefix(line, "Non-consecutive offsets in "); ok {
			file = f
			continue
		}
		if a, b, ok := strings.Cut(strings.TrimSpace(line), " is followed by "); ok && file != "" {
			base := strings.TrimLeft(strings.TrimSuffix(filepath.Base(file), ".log"), "0")
			if base == "" {
				base = "0"
			}
			if a != "-1" || b != base {
				t.Errorf("%s: Kafka finds offsets not consecutive: %s is followed by %s", file, a, b)
			}
		}
	}
}

// dumpIndexes runs kafka-dump-log on offset indexes (and --index-sanity-check)
// and returns how many entries Kafka printed. Kafka's entries name a
// batch's last offset and it checks them against the segment; a mismatch
// is logged as the known difference it is (kraftlab indexes base offsets).
func dumpIndexes(t *testing.T, k *Kafka, indexes []string, trim string) (entries int) {
	t.Helper()
	r := runTool(t, k, MainDumpLog, "--files", strings.Join(indexes, ","))
	if r.Err != nil {
		t.Errorf("kafka-dump-log on the indexes: %v", r.Err)
	}
	dumps := parseDump(r.Stdout)
	for _, f := range indexes {
		df := dumps[f]
		if df == nil {
			t.Errorf("kafka-dump-log printed nothing for %s", f)
			continue
		}
		st, _ := os.Stat(f)
		n := 0
		for _, l := range df.other {
			if strings.HasPrefix(l, "offset: ") {
				n++
			} else {
				t.Errorf("%s: unexpected line from Kafka: %s", filepath.Base(f), l)
			}
		}
		entries += n
		t.Logf("%s (%d bytes): %d entries; %q", strings.TrimPrefix(f, trim+"/"), st.Size(), n, df.header)
	}
	// Kafka's offset index maps a batch's last offset to its position
	// (LogSegment.append); so does kraftlab's, and kafka-dump-log checks it.
	if strings.TrimSpace(r.Stderr) != "" {
		t.Errorf("kafka-dump-log on the indexes, stderr: %s", r.Stderr)
	}
	r = runTool(t, k, MainDumpLog, "--index-sanity-check", "--files", strings.Join(indexes, ","))
	for _, f := range indexes {
		if !strings.Contains(r.Stdout, f+" passed sanity check.") && !strings.Contains(r.Stdout, f+" is empty.") {
			t.Errorf("%s: Kafka's index sanity check did not pass", f)
		}
	}
	return entries
}

// TestDumpKraftlabIndex writes a log with kraftlab's storage package,
// batches of several records each and an index entry every ~200 bytes,
// and has kafka-dump-log check the index against the segment.
func TestDumpKraftlabIndex(t *testing.T) {
	k := needKafka(t)
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	l, err := storage.Open(dir, storage.Options{IndexIntervalBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		recs := make([]storage.Record, 1+i%4)
		for j := range recs {
			recs[j].Value = []byte(fmt.Sprintf("record %d.%d", i, j))
		}
		if _, _, err := l.AppendAsLeader(recs, 1, time.Now().UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "*.index"))
	if dumpIndexes(t, k, idx, dir) == 0 {
		t.Error("kraftlab wrote no index entry")
	}
}
