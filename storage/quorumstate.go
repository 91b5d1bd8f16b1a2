package storage

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// QuorumStateFileName is the file a voter keeps its election state in.
const QuorumStateFileName = "quorum-state"

// ElectionState is what a voter must remember across restarts (Kafka's
// ElectionState): its epoch, the leader it knows of and the vote it cast in
// that epoch.
type ElectionState struct {
	// Epoch is the latest epoch the node has seen (leaderEpoch).
	Epoch int32
	// LeaderID is the leader of Epoch, or -1 if none is known (leaderId).
	LeaderID int32
	// VotedID is the candidate the node voted for in Epoch, or -1 (votedId).
	VotedID int32
	// VotedDirectoryID is the directory id of the candidate voted for
	// (votedDirectoryId), zero if none or unknown; a zero id matches any
	// directory of VotedID, as it does in Kafka.
	VotedDirectoryID [16]byte
	// Voters are the voter ids of the static quorum (currentVoters).
	Voters []int32
	// DataVersion is the file's data_version, as Kafka picks it by the
	// kraft.version: 0 lists Voters, 1 (a dynamic quorum) names
	// VotedDirectoryID instead.
	DataVersion int16
}

// quorumStateData is the file's JSON, with the keys of Kafka's
// QuorumStateData version 0. Pointers tell a missing key from a zero.
type quorumStateData struct {
	ClusterID     string        `json:"clusterId"`
	LeaderID      *int32        `json:"leaderId"`
	LeaderEpoch   *int32        `json:"leaderEpoch"`
	VotedID       *int32        `json:"votedId"`
	AppliedOffset int64         `json:"appliedOffset"`
	CurrentVoters []quorumVoter `json:"currentVoters"`
	DataVersion   *int16        `json:"data_version"`
	// VotedDirectoryID is read only from data_version 1.
	VotedDirectoryID *string `json:"votedDirectoryId,omitempty"`
}

// quorumStateDataV1 is the file's JSON under data_version 1 (kraft.version
// 1): the voters are in the log, and a vote names a directory too.
type quorumStateDataV1 struct {
	LeaderID         int32  `json:"leaderId"`
	LeaderEpoch      int32  `json:"leaderEpoch"`
	VotedID          int32  `json:"votedId"`
	VotedDirectoryID string `json:"votedDirectoryId"`
	DataVersion      int16  `json:"data_version"`
}

type quorumVoter struct {
	VoterID int32 `json:"voterId"`
}

// QuorumStateFile reads and writes a node's quorum-state file.
type QuorumStateFile struct {
	dir  string
	disk Disk
}

// NewQuorumStateFile returns the quorum-state file of directory dir.
func NewQuorumStateFile(dir string) *QuorumStateFile { return NewQuorumStateFileOn(dir, nil) }

// NewQuorumStateFileOn returns the quorum-state file of directory dir,
// written through disk (nil: OS).
func NewQuorumStateFileOn(dir string, disk Disk) *QuorumStateFile {
	return &QuorumStateFile{dir: dir, disk: diskOrOS(disk)}
}

// Path is the file's path.
func (q *QuorumStateFile) Path() string { return filepath.Join(q.dir, QuorumStateFileName) }

// Read returns the stored election state. A missing file is a node that has
// never voted: epoch 0, no leader, no vote. A file that does not parse is an
// error naming it.
func (q *QuorumStateFile) Read() (ElectionState, error) {
	data, err := os.ReadFile(q.Path())
	if errors.Is(err, os.ErrNotExist) {
		return ElectionState{LeaderID: -1, VotedID: -1}, nil
	}
	if err != nil {
		return ElectionState{}, fmt.Errorf("read quorum state: %w", err)
	}
	s, err := parseQuorumState(data)
	if err != nil {
		return ElectionState{}, fmt.Errorf("read quorum state %s: %w", q.Path(), err)
	}
	return s, nil
}

func parseQuorumState(data []byte) (ElectionState, error) {
	var d quorumStateData
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return ElectionState{}, err
	}
	if dec.More() {
		return ElectionState{}, errors.New("data after the JSON object")
	}
	switch {
	case d.DataVersion == nil || d.LeaderEpoch == nil || d.LeaderID == nil || d.VotedID == nil:
		return ElectionState{}, errors.New("missing data_version, leaderEpoch, leaderId or votedId")
	case *d.DataVersion != 0 && *d.DataVersion != 1:
		return ElectionState{}, fmt.Errorf("data_version %d, want 0 or 1", *d.DataVersion)
	case *d.DataVersion == 1 && d.VotedDirectoryID == nil:
		return ElectionState{}, errors.New("data_version 1 without votedDirectoryId")
	}
	s := ElectionState{Epoch: *d.LeaderEpoch, LeaderID: *d.LeaderID, VotedID: *d.VotedID, DataVersion: *d.DataVersion}
	if s.DataVersion == 1 {
		b, err := base64.RawURLEncoding.DecodeString(*d.VotedDirectoryID)
		if err != nil || len(b) != len(s.VotedDirectoryID) {
			return ElectionState{}, fmt.Errorf("votedDirectoryId %q is not a UUID", *d.VotedDirectoryID)
		}
		copy(s.VotedDirectoryID[:], b)
	}
	if s.DataVersion == 0 {
		// Version 1 has no currentVoters: the voters are in the log.
		for _, v := range d.CurrentVoters {
			s.Voters = append(s.Voters, v.VoterID)
		}
	}
	if err := s.validate(); err != nil {
		return ElectionState{}, err
	}
	return s, nil
}

func (s ElectionState) validate() error {
	switch {
	case s.Epoch < 0 || s.LeaderID < -1 || s.VotedID < -1:
		return fmt.Errorf("bad election state: epoch %d, leader %d, voted %d", s.Epoch, s.LeaderID, s.VotedID)
	case s.Epoch == math.MaxInt32:
		// The next election would overflow it: no node could move on.
		return fmt.Errorf("leaderEpoch %d cannot be incremented", s.Epoch)
	case len(s.Voters) > 0 && s.LeaderID >= 0 && !slices.Contains(s.Voters, s.LeaderID):
		return fmt.Errorf("leaderId %d is not one of the voters %v", s.LeaderID, s.Voters)
	case len(s.Voters) > 0 && s.VotedID >= 0 && !slices.Contains(s.Voters, s.VotedID):
		return fmt.Errorf("votedId %d is not one of the voters %v", s.VotedID, s.Voters)
	}
	return nil
}

// Write replaces the stored election state atomically and durably: a temp
// file is written and fsynced, renamed over quorum-state, and the directory
// is fsynced, so a crash leaves the old state or the new one. A write that
// fails (a full disk) leaves the old state.
func (q *QuorumStateFile) Write(s ElectionState) error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("write quorum state: %w", err)
	}
	var data []byte
	var err error
	switch s.DataVersion {
	case 0:
		data, err = json.Marshal(v0(s))
	case 1:
		data, err = json.Marshal(quorumStateDataV1{LeaderID: s.LeaderID, LeaderEpoch: s.Epoch, VotedID: s.VotedID,
			VotedDirectoryID: base64.RawURLEncoding.EncodeToString(s.VotedDirectoryID[:]), DataVersion: 1})
	default:
		return fmt.Errorf("write quorum state: data_version %d, want 0 or 1", s.DataVersion)
	}
	if err != nil {
		return fmt.Errorf("write quorum state: %w", err)
	}
	if err := os.MkdirAll(q.dir, 0o755); err != nil {
		return fmt.Errorf("write quorum state: %w", err)
	}
	return writeFileAtomicOn(q.disk, q.dir, QuorumStateFileName, data, true)
}

// v0 is s as data_version 0 writes it, with Kafka's empty clusterId and
// zero appliedOffset.
func v0(s ElectionState) quorumStateData {
	version := int16(0)
	d := quorumStateData{
		LeaderID:      &s.LeaderID,
		LeaderEpoch:   &s.Epoch,
		VotedID:       &s.VotedID,
		CurrentVoters: []quorumVoter{},
		DataVersion:   &version,
	}
	for _, id := range s.Voters {
		d.CurrentVoters = append(d.CurrentVoters, quorumVoter{VoterID: id})
	}
	return d
}
