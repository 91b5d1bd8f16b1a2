package interop

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// TestKafkaController runs a real Kafka 4.4 controller for a few seconds
// and then compares its files with kraftlab's, has Kafka dump its own
// segment for reference, and opens that segment with kraftlab's storage.
func TestKafkaController(t *testing.T) {
	k := needKafka(t)
	dir := t.TempDir()
	ctx := context.Background()
	start := time.Now()
	// A snapshot once a second (Kafka's minimum is... none: any interval),
	// NoOps at Kafka's 500 ms default.
	c, err := StartController(ctx, k, dir, "metadata.log.max.snapshot.interval.ms=1000")
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	deadline := time.Now().Add(90 * time.Second)
	for {
		snaps, _ := filepath.Glob(filepath.Join(c.MetadataDir, "*.checkpoint"))
		snaps = slices.DeleteFunc(snaps, func(s string) bool { return strings.HasSuffix(s, "-0000000000.checkpoint") })
		if len(snaps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Kafka controller wrote no snapshot in 90s; its log:\n%s", c.Log(40))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("Kafka controller up and snapshotted after %.1fs", time.Since(start).Seconds())

	// What a real Kafka controller answers (from Go: one JVM at a time).
	apis, err := APIVersions(c.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Kafka controller ApiVersions: %s", formatAPIs(apis))
	if kraftlabControllerAPIs != nil {
		for key, rng := range kraftlabControllerAPIs {
			if kr, ok := apis[key]; !ok {
				t.Errorf("kraftlab's controller advertises API %d, the Kafka controller does not", key)
			} else if kr != rng {
				t.Logf("DIFFERENCE: API %d: kraftlab's controller %d-%d, Kafka's %d-%d", key, rng[0], rng[1], kr[0], kr[1])
			}
		}
	}
	dq, err := DescribeQuorum(c.Addr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(dq.Nodes)
	t.Logf("Kafka controller DescribeQuorum v2: Nodes %s (kraftlab's answer has none)", b)
	if len(dq.Nodes) == 0 {
		t.Error("the Kafka controller's DescribeQuorum v2 answer names no Nodes")
	}
	time.Sleep(time.Second) // a few more NoOps
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true

	var files []string
	filepath.Walk(c.LogDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(c.LogDir, p)
			files = append(files, rel)
		}
		return nil
	})
	t.Logf("Kafka's log dir after a clean shutdown: %v", files)

	// kraftlab's files for the same shape: one controller, its leader,
	// static voters as Kafka's controller.quorum.voters makes them.
	p := startPlayground(t, "--controllers", "1", "--brokers", "0", "--profile", "fast", "--set", "kraftlab.quorum.flush=always", "--set", "kraft.version=0")
	time.Sleep(200 * time.Millisecond)
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	kl := p.MetadataDir(1)
	var klFiles []string
	ents, _ := os.ReadDir(kl)
	for _, e := range ents {
		klFiles = append(klFiles, e.Name())
	}
	t.Logf("kraftlab's __cluster_metadata-0 after kraftlab down: %v", klFiles)

	t.Run("quorum-state", func(t *testing.T) {
		kj, lj := readJSON(t, filepath.Join(c.MetadataDir, "quorum-state")), readJSON(t, filepath.Join(kl, "quorum-state"))
		kk, lk := sortedKeys(kj), sortedKeys(lj)
		if !slices.Equal(kk, lk) {
			t.Errorf("quorum-state keys: Kafka %v, kraftlab %v", kk, lk)
		}
		for _, key := range kk {
			kv, _ := json.Marshal(kj[key])
			lv, _ := json.Marshal(lj[key])
			same := string(kv) == string(lv)
			switch key {
			case "leaderEpoch": // both are leaders of their first epoch or so
				same = true
			}
			if !same {
				t.Logf("DIFFERENCE: quorum-state %s: Kafka %s, kraftlab %s", key, kv, lv)
			}
		}
		// kraftlab must read Kafka's file.
		st, err := storage.NewQuorumStateFile(c.MetadataDir).Read()
		if err != nil {
			t.Errorf("kraftlab cannot read Kafka's quorum-state: %v", err)
		}
		t.Logf("kraftlab reads Kafka's quorum-state as %+v", st)
	})

	t.Run("leader-epoch-checkpoint", func(t *testing.T) {
		kb, err1 := os.ReadFile(filepath.Join(c.MetadataDir, "leader-epoch-checkpoint"))
		lb, err2 := os.ReadFile(filepath.Join(kl, "leader-epoch-checkpoint"))
		if err1 != nil || err2 != nil {
			t.Fatal(errors.Join(err1, err2))
		}
		t.Logf("Kafka:\n%skraftlab:\n%s", indent(string(kb)), indent(string(lb)))
		if shape(string(kb)) != shape(string(lb)) {
			t.Errorf("leader-epoch-checkpoint shapes: Kafka %q, kraftlab %q", shape(string(kb)), shape(string(lb)))
		}
	})

	// Kafka's reading of its own files, for reference next to kraftlab's.
	segs, _ := filepath.Glob(filepath.Join(c.MetadataDir, "*.log"))
	snaps, _ := filepath.Glob(filepath.Join(c.MetadataDir, "*.checkpoint"))
	r := runTool(t, k, MainDumpLog, "--cluster-metadata-decoder", "--files", strings.Join(append(append([]string{}, segs...), snaps...), ","))
	if r.Err != nil {
		t.Fatalf("kafka-dump-log on Kafka's own files: %v", r.Err)
	}
	kafkaDump := parseDump(r.Stdout)

	t.Run("records byte for byte", func(t *testing.T) {
		// Kafka's first one-record control batch is its LeaderChange, as
		// kraftlab's (after its bootstrap batch of a dynamic quorum, two
		// records); both leaders are node 1 of voters [1], so the records
		// must be equal, and so must a NoOpRecord's.
		first := func(dir string) (lc, noop *storage.Record, lcSize, noopSize int) {
			raw, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
			if err != nil {
				t.Fatal(err)
			}
			storage.Batches(raw, func(_ int, b *storage.Batch) error {
				recs, err := b.Records()
				if err != nil || len(recs) != 1 {
					return nil
				}
				switch {
				case b.IsControl() && lc == nil:
					lc, lcSize = &recs[0], b.Size()
				case !b.IsControl() && noop == nil && len(recs[0].Value) == 4 && recs[0].Value[1] == 20: // API key 20: NoOpRecord
					noop, noopSize = &recs[0], b.Size()
				}
				return nil
			})
			if lc == nil || noop == nil {
				t.Fatalf("%s: no LeaderChange or NoOpRecord batch", dir)
			}
			return
		}
		klc, knoop, klcSize, knoopSize := first(c.MetadataDir)
		llc, lnoop, llcSize, lnoopSize := first(kl)
		if string(klc.Key) != string(llc.Key) || string(klc.Value) != string(llc.Value) || klcSize != llcSize {
			t.Errorf("LeaderChange: Kafka key %x value %x (batch %d bytes), kraftlab key %x value %x (batch %d bytes)", klc.Key, klc.Value, klcSize, llc.Key, llc.Value, llcSize)
		}
		if string(knoop.Value) != string(lnoop.Value) || knoop.Key != nil != (lnoop.Key != nil) || knoopSize != lnoopSize {
			t.Errorf("NoOpRecord: Kafka value %x (batch %d bytes), kraftlab value %x (batch %d bytes)", knoop.Value, knoopSize, lnoop.Value, lnoopSize)
		}
		t.Logf("LeaderChange key %x value %x, batch %d bytes; NoOpRecord value %x, batch %d bytes: the same in Kafka's log and kraftlab's", klc.Key, klc.Value, klcSize, knoop.Value, knoopSize)
	})

	t.Run("kraftlab reads Kafka's log", func(t *testing.T) {
		nd := filepath.Join(t.TempDir(), "node-1", "__cluster_metadata-0")
		if err := os.MkdirAll(nd, 0o755); err != nil {
			t.Fatal(err)
		}
		var copied []string
		for _, f := range files {
			base := filepath.Base(f)
			if filepath.Dir(f) != "__cluster_metadata-0" || strings.HasSuffix(base, ".timeindex") || base == "partition.metadata" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(c.LogDir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(nd, base), b, 0o644); err != nil {
				t.Fatal(err)
			}
			copied = append(copied, base)
		}
		t.Logf("copied into a kraftlab node folder: %v", copied)
		if st, err := os.Stat(filepath.Join(nd, "00000000000000000000.index")); err == nil {
			t.Logf("Kafka's 00000000000000000000.index: %d bytes", st.Size())
		}
		l, err := storage.Open(nd, storage.Options{})
		if err != nil {
			t.Fatalf("storage.Open on Kafka's log: %v", err)
		}
		defer l.Close()
		t.Logf("kraftlab opens Kafka's log: [%d, %d), last epoch %d, epochs %v, recovery: %s", l.LogStartOffset(), l.LogEndOffset(), l.LastEpoch(), l.Epochs(), l.Recovery())
		if l.Recovery().Truncated() || l.Recovery().LostRecords() {
			t.Errorf("kraftlab cut or lost records of Kafka's log: %s", l.Recovery())
		}
		// Every batch, read back through the log, against Kafka's dump.
		var kafkaBatches []dumpBatch
		for _, s := range segs {
			kafkaBatches = append(kafkaBatches, kafkaDump[s].batches...)
		}
		i := 0
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			raw, err := l.Read(off, 1<<20)
			if err != nil {
				t.Fatalf("read offset %d: %v", off, err)
			}
			err = storage.Batches(raw, func(_ int, b *storage.Batch) error {
				if i < len(kafkaBatches) {
					kb := kafkaBatches[i].fields
					if kb["baseOffset"] != itoa(b.FirstOffset) || kb["lastOffset"] != itoa(b.LastOffset()) || kb["crc"] != itoa(int64(uint32(b.CRC))) || kb["partitionLeaderEpoch"] != itoa(int64(b.PartitionLeaderEpoch)) {
						t.Errorf("batch %d: kraftlab %d-%d epoch %d crc %d, Kafka %v", i, b.FirstOffset, b.LastOffset(), b.PartitionLeaderEpoch, uint32(b.CRC), kb)
					}
				}
				if _, err := b.Records(); err != nil {
					t.Errorf("batch at %d: records: %v", b.FirstOffset, err)
				}
				i++
				off = b.NextOffset()
				return nil
			})
			if err != nil {
				t.Fatalf("batches at %d: %v", off, err)
			}
		}
		if i != len(kafkaBatches) {
			t.Errorf("kraftlab read %d batches, Kafka dumped %d", i, len(kafkaBatches))
		}
		t.Logf("kraftlab read %d batches of Kafka's segment(s), offsets, epochs and CRCs as Kafka's dump says", i)

		ss, err := storage.OpenSnapshots(nd)
		if err != nil {
			t.Fatalf("OpenSnapshots on Kafka's snapshots: %v", err)
		}
		for _, id := range ss.List() {
			sr, err := ss.Open(id)
			if err != nil {
				t.Errorf("open Kafka's snapshot %v: %v", id, err)
				continue
			}
			recs, err := sr.Records()
			sr.Close()
			t.Logf("kraftlab reads Kafka's snapshot %v: %d records, %v", id, len(recs), err)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", path, b)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// shape reduces a checkpoint file to its form: each line's fields as
// "n" (a number) or "s".
func shape(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		var f []string
		for _, w := range strings.Fields(l) {
			if strings.Trim(w, "-0123456789") == "" {
				f = append(f, "n")
			} else {
				f = append(f, "s")
			}
		}
		lines = append(lines, strings.Join(f, " "))
	}
	// The entries' count varies: keep version, count and the entry form.
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return strings.Join(lines, "|")
}
