package raft

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kraftlab/kraftlab/storage"
)

// KRaftVersion is the kraft.version feature level of a quorum.
type KRaftVersion int16

// The kraft.version levels.
const (
	// KRaftVersion0 is the static quorum: the voters are
	// controller.quorum.voters (Config.Voters) and nothing in the log
	// changes them.
	KRaftVersion0 KRaftVersion = 0
	// KRaftVersion1 is the dynamic quorum (KIP-853): the voter set is the
	// latest VotersRecord in the log or snapshot, changed by AddVoter and
	// RemoveVoter.
	KRaftVersion1 KRaftVersion = 1
)

// DirectoryID is the random id of a replica's metadata log directory
// (Kafka's directory UUID): it tells a voter apart from a node with the
// same id that lost its disk. The zero value is "unknown".
type DirectoryID [16]byte

// IsZero reports whether the directory id is unknown.
func (d DirectoryID) IsZero() bool { return d == DirectoryID{} }

// Endpoint is one listener of a voter.
type Endpoint = storage.Endpoint

// Voter is one member of a voter set (Kafka's VoterSet.VoterNode): its id
// and directory id (together Kafka's ReplicaKey), its listeners, the first
// being its default, and the kraft.version levels it supports.
type Voter struct {
	ID          int32
	DirectoryID DirectoryID
	Endpoints   []Endpoint
	MinVersion  KRaftVersion
	MaxVersion  KRaftVersion
}

// matches reports whether the voter is the replica (id, dir): the ids are
// equal, and the directory ids too when both are known.
func (v Voter) matches(id int32, dir DirectoryID) bool {
	return v.ID == id && (v.DirectoryID.IsZero() || dir.IsZero() || v.DirectoryID == dir)
}

func (v Voter) equal(o Voter) bool {
	return v.ID == o.ID && v.DirectoryID == o.DirectoryID && v.MinVersion == o.MinVersion &&
		v.MaxVersion == o.MaxVersion && slices.Equal(v.Endpoints, o.Endpoints)
}

// VoterSet is the set of voters, ordered by id; the zero value is empty.
type VoterSet []Voter

// StaticVoters is the voter set of a static quorum: ids only.
func StaticVoters(ids []int32) VoterSet {
	s := make(VoterSet, 0, len(ids))
	for _, id := range ids {
		s = append(s, Voter{ID: id})
	}
	return s.sorted()
}

// clone copies the set and the voters' endpoints.
func (s VoterSet) clone() VoterSet {
	out := slices.Clone(s)
	for i := range out {
		out[i].Endpoints = slices.Clone(out[i].Endpoints)
	}
	return out
}

func (s VoterSet) sorted() VoterSet {
	slices.SortStableFunc(s, func(a, b Voter) int { return cmp.Compare(a.ID, b.ID) })
	return s
}

// IDs returns the voters' ids in order.
func (s VoterSet) IDs() []int32 {
	out := make([]int32, len(s))
	for i, v := range s {
		out[i] = v.ID
	}
	return out
}

// Contains reports whether id is a voter.
func (s VoterSet) Contains(id int32) bool { _, ok := s.Voter(id); return ok }

// Voter returns the voter with id.
func (s VoterSet) Voter(id int32) (Voter, bool) {
	for _, v := range s {
		if v.ID == id {
			return v, true
		}
	}
	return Voter{}, false
}

// Equal reports whether two voter sets hold the same voters.
func (s VoterSet) Equal(o VoterSet) bool { return slices.EqualFunc(s, o, Voter.equal) }

// OverlappingMajority reports whether every majority of s shares a voter
// with every majority of o, which holds when they differ by one voter
// (Kafka's VoterSet.hasOverlappingMajority): the reason one change at a
// time is safe.
func (s VoterSet) OverlappingMajority(o VoterSet) bool {
	common := 0
	for _, v := range s {
		if o.Contains(v.ID) {
			common++
		}
	}
	return common > len(s)-(len(s)/2+1) && common > len(o)-(len(o)/2+1)
}

func (s VoterSet) String() string { return fmt.Sprint(s.IDs()) }

func (s VoterSet) with(v Voter) VoterSet {
	return append(slices.Clone(s), v).sorted()
}

func (s VoterSet) without(id int32) VoterSet {
	return slices.DeleteFunc(slices.Clone(s), func(v Voter) bool { return v.ID == id })
}

// record encodes the set as a VotersRecord control record.
func (s VoterSet) record() storage.Record {
	v := storage.VotersRecordValue{}
	for _, vr := range s {
		v.Voters = append(v.Voters, storage.VoterRecord{
			ID: vr.ID, DirectoryID: vr.DirectoryID, Endpoints: slices.Clone(vr.Endpoints),
			MinVersion: int16(vr.MinVersion), MaxVersion: int16(vr.MaxVersion),
		})
	}
	return storage.VotersRecord(v)
}

func votersFromRecord(v storage.VotersRecordValue) VoterSet {
	s := make(VoterSet, 0, len(v.Voters))
	for _, vr := range v.Voters {
		s = append(s, Voter{ID: vr.ID, DirectoryID: vr.DirectoryID, Endpoints: vr.Endpoints,
			MinVersion: KRaftVersion(vr.MinVersion), MaxVersion: KRaftVersion(vr.MaxVersion)})
	}
	return s.sorted()
}
