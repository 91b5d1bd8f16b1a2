package record

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

// TestPayloadJSONGolden: every sample record, every version, prints as
// Kafka's JsonConverter does (the golden file was checked field by field
// against the schemas; interop compares it with kafka-dump-log itself).
func TestPayloadJSONGolden(t *testing.T) {
	var b strings.Builder
	for _, r := range samples() {
		j, err := PayloadJSON(r)
		if err != nil {
			t.Fatalf("%s v%d: %v", Name(r), r.RecordVersion(), err)
		}
		if !json.Valid(j) {
			t.Fatalf("%s v%d: invalid JSON %s", Name(r), r.RecordVersion(), j)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	golden(t, "payload.json.golden", b.String())
}

func TestTypeName(t *testing.T) {
	for k, want := range map[APIKey]string{
		KeyRegisterBroker:           "REGISTER_BROKER_RECORD",
		KeyPartitionChange:          "PARTITION_CHANGE_RECORD",
		KeyBrokerRegistrationChange: "BROKER_REGISTRATION_CHANGE_RECORD",
		KeyNoOp:                     "NO_OP_RECORD",
		KeyFeatureLevel:             "FEATURE_LEVEL_RECORD",
		KeyTopic:                    "TOPIC_RECORD",
		KeyBeginTransaction:         "BEGIN_TRANSACTION_RECORD",
		KeyRegisterController:       "REGISTER_CONTROLLER_RECORD",
		APIKey(99):                  "apiKey 99",
	} {
		if got := k.TypeName(); got != want {
			t.Errorf("%d: %q, want %q", k, got, want)
		}
	}
}

// TestJSONTaggedDefaultsLeftOut: a tagged field at its default is not
// printed; the same field set is.
func TestJSONTaggedDefaultsLeftOut(t *testing.T) {
	for _, tc := range []struct {
		r    Record
		want string
	}{
		{NewPartitionChangeRecord(topicA, 3), `{"partitionId":3,"topicId":"AQIDBAUGBwgJCgsMDQ4PEA"}`},
		{&PartitionChangeRecord{Version: 2, PartitionID: 1, TopicID: topicA, Leader: NoLeader, LeaderRecoveryState: LeaderRecoveryNoChange, Isr: []int32{}},
			`{"partitionId":1,"topicId":"AQIDBAUGBwgJCgsMDQ4PEA","isr":[],"leader":-1}`},
		{&BrokerRegistrationChangeRecord{Version: 0, BrokerID: 1, BrokerEpoch: 2, Fenced: FencingFence},
			`{"brokerId":1,"brokerEpoch":2,"fenced":1}`},
		{&BrokerRegistrationChangeRecord{Version: 3, BrokerID: 1, BrokerEpoch: 2, LogDirs: []Uuid{}, CordonedLogDirs: []Uuid{}},
			`{"brokerId":1,"brokerEpoch":2,"cordonedLogDirs":[]}`},
		{&PartitionRecord{Version: 0, PartitionID: 0, TopicID: ZeroUuid, Leader: NoLeader, LeaderEpoch: 0, PartitionEpoch: 0},
			`{"partitionId":0,"topicId":"AAAAAAAAAAAAAAAAAAAAAA","replicas":[],"isr":[],"removingReplicas":[],"addingReplicas":[],"leader":-1,"leaderEpoch":0,"partitionEpoch":0}`},
		{&NoOpRecord{}, `{}`},
		{&BeginTransactionRecord{}, `{}`},
		{&BeginTransactionRecord{Name: str("Bootstrap records")}, `{"name":"Bootstrap records"}`},
		{&AbortTransactionRecord{Reason: str("")}, `{"reason":""}`},
	} {
		got, err := JSON(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", Name(tc.r), got, tc.want)
		}
	}
}

// TestJSONEscapesAsJackson: quotes, backslashes and control characters are
// escaped, everything else (non-ASCII, <, >, &) is written as is; invalid
// UTF-8 becomes U+FFFD.
func TestJSONEscapesAsJackson(t *testing.T) {
	r := &TopicRecord{Name: "a\"b\\c\n\t\x01\x1f<>&é\u2028\xff", TopicID: ZeroUuid}
	got, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"a\"b\\c\n\t\u0001\u001F<>&é` + "\u2028\uFFFD" + `","topicId":"AAAAAAAAAAAAAAAAAAAAAA"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var back struct{ Name string }
	if err := json.Unmarshal(got, &back); err != nil || back.Name != "a\"b\\c\n\t\x01\x1f<>&é\u2028\uFFFD" {
		t.Errorf("does not read back: %q, %v", back.Name, err)
	}
}

// TestJSONRefusesWhatTheVersionCannotCarry, as Kafka's converter throws
// UnsupportedVersionException.
func TestJSONRefusesWhatTheVersionCannotCarry(t *testing.T) {
	for _, r := range []Record{
		&RegisterBrokerRecord{Version: 5},
		&TopicRecord{Version: -1},
		&PartitionRecord{Version: 0, Directories: nil, LastKnownElr: []int32{1}},
		&RegisterBrokerRecord{Version: 2, LogDirs: []Uuid{dirA}},
	} {
		if j, err := JSON(r); err == nil {
			t.Errorf("%s v%d printed %s", Name(r), r.RecordVersion(), j)
		} else if !strings.Contains(err.Error(), Name(r)) {
			t.Errorf("error does not name the record: %v", err)
		}
	}
}

// FuzzJSON: whatever Decode accepts prints as valid JSON naming its type.
func FuzzJSON(f *testing.F) {
	for _, r := range samples() {
		b, _ := Encode(r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		j, err := PayloadJSON(r)
		if err != nil {
			t.Fatalf("%s decoded from %x does not print: %v", Name(r), b, err)
		}
		var p struct {
			Type    string
			Version int16
			Data    map[string]any
		}
		if err := json.Unmarshal(j, &p); err != nil {
			t.Fatalf("invalid JSON %s: %v", j, err)
		}
		if p.Type != r.APIKey().TypeName() || p.Version != r.RecordVersion() || p.Data == nil {
			t.Fatalf("payload %s for %s v%d", j, Name(r), r.RecordVersion())
		}
	})
}
