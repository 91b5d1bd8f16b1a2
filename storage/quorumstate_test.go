package storage

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQuorumStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	q := NewQuorumStateFile(dir)
	s, err := q.Read()
	if err != nil || s.Epoch != 0 || s.LeaderID != -1 || s.VotedID != -1 {
		t.Fatalf("missing file: %+v %v", s, err)
	}
	for _, want := range []ElectionState{
		{Epoch: 1, LeaderID: -1, VotedID: 2, Voters: []int32{1, 2, 3}},
		{Epoch: 1, LeaderID: 2, VotedID: 2, Voters: []int32{1, 2, 3}},
		{Epoch: 8, LeaderID: -1, VotedID: 2, VotedDirectoryID: [16]byte{0x27, 0xc6}, DataVersion: 1},
		{Epoch: 8, LeaderID: 2, VotedID: -1, DataVersion: 1},
		{Epoch: 7, LeaderID: -1, VotedID: -1},
	} {
		if err := q.Write(want); err != nil {
			t.Fatal(err)
		}
		got, err := q.Read()
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("read %+v %v, want %+v", got, err, want)
		}
	}
	// Kafka's key names, so kafka-metadata-quorum users recognise the file
	// (data_version 0, the last written).
	var m map[string]any
	if err := json.Unmarshal(fileBytes(t, q.Path()), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"leaderId", "leaderEpoch", "votedId", "currentVoters", "data_version"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("key %s missing from %v", k, m)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("write left %d files", len(entries))
	}
	if err := q.Write(ElectionState{Epoch: -1}); err == nil {
		t.Fatal("negative epoch written")
	}
}

// Under kraft.version 1 the file is Kafka's data_version 1: no voters (they
// are in the log), and the vote names the candidate's directory.
func TestQuorumStateVersion1(t *testing.T) {
	dir := t.TempDir()
	q := NewQuorumStateFile(dir)
	dirID := [16]byte{0x27, 0xc6, 0x80, 0x3d, 0xc7, 0xcb, 0x42, 0xdd, 0x9b, 0xaa, 0xcd, 0x49, 0x4f, 0xfa, 0xcc, 0x81}
	if err := q.Write(ElectionState{Epoch: 2, LeaderID: -1, VotedID: 1, VotedDirectoryID: dirID, DataVersion: 1}); err != nil {
		t.Fatal(err)
	}
	want := `{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}`
	if got := string(fileBytes(t, q.Path())); got != want {
		t.Fatalf("file\n%s\nwant Kafka's\n%s", got, want)
	}
	for _, bad := range []string{
		`{"leaderId":-1,"leaderEpoch":2,"votedId":1,"data_version":1}`,
		`{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"short","data_version":1}`,
	} {
		if err := os.WriteFile(q.Path(), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Read(); err == nil {
			t.Errorf("%s read without error", bad)
		}
	}
}

// Kafka's own file (QuorumStateData v0 as Kafka 3.x writes it) reads back.
func TestQuorumStateReadsKafkaFile(t *testing.T) {
	dir := t.TempDir()
	kafka := `{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}`
	if err := os.WriteFile(filepath.Join(dir, QuorumStateFileName), []byte(kafka), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewQuorumStateFile(dir).Read()
	if err != nil || s.Epoch != 5 || s.LeaderID != 1 || s.VotedID != -1 || len(s.Voters) != 3 {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestQuorumStateCorrupt(t *testing.T) {
	dir := t.TempDir()
	q := NewQuorumStateFile(dir)
	for _, bad := range []string{
		"", "{", "[]", `{"leaderId":1}`,
		`{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":9}`,
		`{"leaderId":1,"leaderEpoch":-5,"votedId":-1,"data_version":0}`,
		`{"leaderId":1,"leaderEpoch":5,"votedId":-1,"data_version":0}{}`,
		`{"leaderId":"one","leaderEpoch":5,"votedId":-1,"data_version":0}`,
	} {
		if err := os.WriteFile(q.Path(), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Read(); err == nil || !strings.Contains(err.Error(), q.Path()) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

// A write that dies before its rename leaves the old state readable.
func TestQuorumStateAtomic(t *testing.T) {
	dir := t.TempDir()
	q := NewQuorumStateFile(dir)
	old := ElectionState{Epoch: 3, LeaderID: 1, VotedID: 1}
	if err := q.Write(old); err != nil {
		t.Fatal(err)
	}
	// What a crash between the temp write and the rename leaves behind.
	if err := os.WriteFile(q.Path()+".tmp", []byte(`{"leaderId":2,"lea`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := q.Read(); err != nil || fmt.Sprint(s) != fmt.Sprint(old) {
		t.Fatalf("read %+v %v", s, err)
	}
	// The next write replaces both.
	if err := q.Write(ElectionState{Epoch: 4, LeaderID: -1, VotedID: 2}); err != nil {
		t.Fatal(err)
	}
	if s, _ := q.Read(); s.Epoch != 4 || s.VotedID != 2 {
		t.Fatalf("read %+v", s)
	}
	if _, err := os.Stat(q.Path() + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temp file left: %v", err)
	}
	// A directory where the file should be makes Write fail without
	// touching anything else.
	blocked := NewQuorumStateFile(filepath.Join(dir, "sub"))
	if err := os.MkdirAll(filepath.Join(dir, "sub", QuorumStateFileName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := blocked.Write(old); err == nil {
		t.Fatal("write over a directory succeeded")
	}
}

// A file whose epoch cannot be incremented, or that names a leader or a
// vote outside its voters, is refused at open with an error naming it:
// otherwise the node would start "Follower of 77", or be unable to stand.
func TestQuorumStateRefusesUnsafeFiles(t *testing.T) {
	for name, body := range map[string]string{
		"leaderEpoch": `{"clusterId":"","leaderId":1,"leaderEpoch":2147483647,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}`,
		"leaderId":    `{"clusterId":"","leaderId":77,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}`,
		"votedId":     `{"clusterId":"","leaderId":-1,"leaderEpoch":5,"votedId":77,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}`,
	} {
		dir := t.TempDir()
		q := NewQuorumStateFile(dir)
		if err := os.WriteFile(q.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := q.Read()
		if err == nil || !strings.Contains(err.Error(), q.Path()) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: read %v, want an error naming %s and the field", name, err, q.Path())
		}
	}
	q := NewQuorumStateFile(t.TempDir())
	if err := q.Write(ElectionState{Epoch: 2147483647, LeaderID: -1, VotedID: -1}); err == nil {
		t.Error("wrote an epoch that cannot be incremented")
	}
	if err := q.Write(ElectionState{Epoch: 3, LeaderID: 77, VotedID: -1, Voters: []int32{1, 2, 3}}); err == nil {
		t.Error("wrote a leader outside the voters")
	}
}

// FuzzQuorumState feeds arbitrary files to the quorum-state reader: it must
// never panic, and a state it accepts must write and read back the same.
func FuzzQuorumState(f *testing.F) {
	f.Add(`{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}`)
	f.Add(`{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, file string) {
		s, err := parseQuorumState([]byte(file))
		if err != nil {
			return
		}
		q := NewQuorumStateFile(t.TempDir())
		if err := q.Write(s); err != nil {
			t.Fatalf("%+v read from %q does not write: %v", s, file, err)
		}
		back, err := q.Read()
		if err != nil || fmt.Sprint(back) != fmt.Sprint(s) {
			t.Fatalf("%+v read back as %+v %v", s, back, err)
		}
	})
}
