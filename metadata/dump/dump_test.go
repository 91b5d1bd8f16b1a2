package dump

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

func text(t *testing.T, d *Dump) string {
	t.Helper()
	var b strings.Builder
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLogTranscript: a segment prints as kafka-dump-log
// --cluster-metadata-decoder prints it (interop/ compares the same lines
// with Kafka's own output).
func TestLogTranscript(t *testing.T) {
	d := ReadFile("/data/__cluster_metadata-0/00000000000000000000.log", smallLog(t))
	if d.InvalidBytes != 0 || len(d.Batches) != 5 {
		t.Fatalf("%d batches, %d invalid bytes (%s)", len(d.Batches), d.InvalidBytes, d.Invalid)
	}
	golden(t, "log.golden", text(t, d))
}

func TestSnapshotTranscript(t *testing.T) {
	d := ReadFile("00000000000000000010-0000000001.checkpoint", smallSnapshot(t))
	if d.Header != "Snapshot end offset: 10, epoch: 1" {
		t.Errorf("header %q", d.Header)
	}
	golden(t, "snapshot.golden", text(t, d))
}

func TestFileHeader(t *testing.T) {
	for name, want := range map[string]string{
		"00000000000000001234.log":                       "Log starting offset: 1234",
		"dir/00000000000000000007-0000000003.checkpoint": "Snapshot end offset: 7, epoch: 3",
		"bootstrap.checkpoint":                           "KRaft bootstrap snapshot",
		"notes.txt":                                      "",
		"x.log":                                          "",
	} {
		if got := ReadFile(name, nil).Header; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// TestBadRecordDoesNotStopTheDump: an undecodable record is an error line
// naming its offset and the reason; the batches after it still print; bytes
// that are no batch are counted at the end.
func TestBadRecordDoesNotStopTheDump(t *testing.T) {
	var raw []byte
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 0, LeaderEpoch: 2, Timestamp: t0},
		[]storage.Record{{Value: []byte{1, 99, 0}}, {Value: []byte{1, 2, 0, 0xff}}, {Value: nil}})
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 3, LeaderEpoch: 2, Control: true, Timestamp: t0},
		[]storage.Record{{Key: storage.LeaderChangeRecord(1, nil, nil).Key, Value: []byte{0, 0, 0}}})
	raw = storage.AppendBatch(raw, storage.BatchSpec{BaseOffset: 4, LeaderEpoch: 2, Timestamp: t0}, encode(t, &record.NoOpRecord{}))
	raw = append(raw, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0)
	d := Read(raw)
	out := text(t, d)
	for _, want := range []string{
		"| offset: 0 CreateTime: 1767225600000 keySize: -1 valueSize: 3 sequence: -1 headerKeys: [] payload: Error at 0, skipping. unknown metadata record: apiKey 99",
		"| offset: 1 CreateTime: 1767225600000 keySize: -1 valueSize: 4 sequence: -1 headerKeys: [] payload: Error at 1, skipping. malformed metadata record: TopicRecord v0",
		"| offset: 2 CreateTime: 1767225600000 keySize: -1 valueSize: -1 sequence: -1 headerKeys: [] payload: Error at 2, skipping. malformed metadata record: frame header",
		"headerKeys: [] LeaderChange: error: LeaderChange at offset 3: ",
		`| offset: 4 CreateTime: 1767225600000 keySize: -1 valueSize: 4 sequence: -1 headerKeys: [] payload: {"type":"NO_OP_RECORD","version":0,"data":{}}`,
		"Found 10 invalid bytes at the end of the bytes read\n  at position ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if d.InvalidBytes != 10 || len(d.Batches) != 3 {
		t.Errorf("%d batches, %d invalid bytes", len(d.Batches), d.InvalidBytes)
	}
}

// TestJSONForm: the --json form carries the same facts as the text, with
// each record's type name, version and JSON as values a script can read.
func TestJSONForm(t *testing.T) {
	j, err := json.Marshal(ReadFile("00000000000000000000.log", smallLog(t)))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		File    string
		Header  string
		Batches []struct {
			BaseOffset           int64
			PartitionLeaderEpoch int32
			IsControl            bool
			Timestamp            int64
			Records              []struct {
				Offset  int64
				Control string
				Type    string
				Version *int16
				Data    map[string]any
			}
		}
	}
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if back.Header != "Log starting offset: 0" || len(back.Batches) != 5 {
		t.Fatalf("%s", j)
	}
	lc := back.Batches[0]
	if !lc.IsControl || lc.Records[0].Control != "LeaderChange" || lc.Records[0].Data["leaderId"] != 1.0 || lc.Records[0].Type != "" {
		t.Errorf("leader change batch: %+v", lc)
	}
	reg := back.Batches[2]
	if reg.IsControl || reg.BaseOffset != 2 || reg.PartitionLeaderEpoch != 1 || reg.Timestamp != t0+20 {
		t.Errorf("register batch: %+v", reg)
	}
	if r := reg.Records[0]; r.Offset != 2 || r.Type != "REGISTER_BROKER_RECORD" || r.Version == nil || *r.Version != 4 || r.Data["brokerId"] != 101.0 {
		t.Errorf("register record: %+v", r)
	}
	if r := reg.Records[1]; r.Offset != 3 || r.Type != "BROKER_REGISTRATION_CHANGE_RECORD" || r.Data["fenced"] != -1.0 {
		t.Errorf("unfence record: %+v", r)
	}
}

func TestSequence(t *testing.T) {
	for _, c := range []struct{ base, delta, want int32 }{
		{-1, 5, -1}, {0, 5, 5}, {1<<31 - 1, 1, 0}, {1<<31 - 3, 5, 2}, {3, -1, -1},
	} {
		if got := sequence(c.base, c.delta); got != c.want {
			t.Errorf("sequence(%d, %d) = %d, want %d", c.base, c.delta, got, c.want)
		}
	}
}

// TestFromBatchesIsRead: batches already decoded (a snapshot reader's)
// give the dump their raw bytes give.
func TestFromBatchesIsRead(t *testing.T) {
	raw := smallSnapshot(t)
	var batches []storage.Batch
	if err := storage.Batches(raw, func(_ int, b *storage.Batch) error { batches = append(batches, *b); return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := text(t, FromBatches(batches)), text(t, Read(raw)); got != want {
		t.Errorf("from batches:\n%s\nfrom bytes:\n%s", got, want)
	}
}

// controlRecords are control records of the types the quorum does not
// write, as kafka-dump-log prints them.
func controlRecords() []storage.Record {
	key := func(t kmsg.ControlRecordKeyType) []byte { return (&kmsg.ControlRecordKey{Type: t}).AppendTo(nil) }
	marker := (&kmsg.EndTxnMarker{CoordinatorEpoch: 7}).AppendTo(nil)
	return []storage.Record{
		{Key: key(kmsg.ControlRecordKeyTypeAbort), Value: marker},
		{Key: key(kmsg.ControlRecordKeyTypeCommit), Value: marker},
		{Key: key(kmsg.ControlRecordKeyTypeKraftVersion), Value: []byte{0, 0, 0, 1, 0}},
	}
}

func TestOtherControlRecords(t *testing.T) {
	recs := append(controlRecords(),
		storage.Record{Key: (&kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeKraftVoters}).AppendTo(nil), Value: []byte{0, 0}},
		storage.VotersRecord(storage.VotersRecordValue{Voters: []storage.VoterRecord{{ID: 1, DirectoryID: [16]byte{15: 1},
			Endpoints: []storage.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9093}}, MaxVersion: 1}}}),
		storage.Record{Key: (&kmsg.ControlRecordKey{Type: 9}).AppendTo(nil), Value: []byte{0, 0}},
		storage.Record{Key: []byte{0}, Value: nil},
	)
	out := text(t, Read(storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: 20, LeaderEpoch: 1, Control: true, Timestamp: t0}, recs)))
	for _, want := range []string{
		"headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 7\n",
		"headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 7\n",
		`headerKeys: [] KRaftVersion {"version":0,"kRaftVersion":1}` + "\n",
		"headerKeys: [] KRaftVoters error: KRaftVoters at offset 23: malformed metadata record: VotersRecord at offset 23: malformed control record value: short or bad varint\n",
		`headerKeys: [] KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAQ","endpoints":[{"name":"CONTROLLER","host":"127.0.0.1","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}` + "\n",
		"headerKeys: [] controlType: UNKNOWN(9)\n",
		"| offset: 26 CreateTime: 1767225600000 keySize: 1 valueSize: -1 sequence: -1 headerKeys: [] payload: Error at 26, skipping. control record key at offset 26: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
