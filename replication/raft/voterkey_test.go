package raft_test

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A Vote or BeginQuorumEpoch names the voter it is for by id and
// directory id; a node with that id and another directory (one that lost
// its disk) answers INVALID_VOTER_KEY and does not vote.
func TestVoterKeyMustMatch(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2, 3}, []int32{1, 2, 3})
	// What a candidate sends names both ends' directories.
	votes := 0
	h.delivered = func(m raft.Message) {
		if v, ok := m.Request.(*kmsg.VoteRequest); ok {
			votes++
			p := v.Topics[0].Partitions[0]
			if p.CandidateDirectoryID != dirOf(m.From) || p.VoterDirectoryID != dirOf(m.To) || v.VoterID != m.To {
				t.Errorf("vote request %v names voter %d in %x from %x", m, v.VoterID, p.VoterDirectoryID, p.CandidateDirectoryID)
			}
		}
	}
	h.elect(1)
	h.delivered = nil
	if votes == 0 {
		t.Fatal("no vote requests seen")
	}
	epoch := h.status(1).Epoch
	st := h.status(2)
	vote := func(dir raft.DirectoryID) kmsg.VoteResponseTopicPartition {
		req := voteReq(3, epoch+1, st.Epoch, 1<<40, false)
		req.VoterID = 2
		req.Topics[0].Partitions[0].VoterDirectoryID = dir
		return h.request(2, 3, req).(*kmsg.VoteResponse).Topics[0].Partitions[0]
	}
	if p := vote(dirOf(77)); raft.ErrorName(p.ErrorCode) != "INVALID_VOTER_KEY" || p.VoteGranted {
		t.Fatalf("vote for another directory: %s, granted %v", raft.ErrorName(p.ErrorCode), p.VoteGranted)
	}
	if got := h.status(2); got.VotedID >= 0 {
		t.Fatalf("node 2 voted for %d", got.VotedID)
	}
	if p := vote(dirOf(2)); p.ErrorCode != 0 || !p.VoteGranted {
		t.Fatalf("vote for node 2's directory: %s, granted %v", raft.ErrorName(p.ErrorCode), p.VoteGranted)
	}

	// BeginQuorumEpoch: the node learns of the leader either way (Kafka's
	// order), but refuses to be the voter named.
	h.advance(time.Second)
	e := h.status(3).Epoch + 5
	req := beginReq(2, e)
	req.VoterID = 3
	req.Topics[0].Partitions[0].VoterDirectoryID = dirOf(77)
	p := h.request(3, 2, req).(*kmsg.BeginQuorumEpochResponse).Topics[0].Partitions[0]
	if raft.ErrorName(p.ErrorCode) != "INVALID_VOTER_KEY" {
		t.Fatalf("BeginQuorumEpoch for another directory: %s", raft.ErrorName(p.ErrorCode))
	}
	req = beginReq(2, e)
	req.VoterID = 3
	req.Topics[0].Partitions[0].VoterDirectoryID = dirOf(3)
	if p := h.request(3, 2, req).(*kmsg.BeginQuorumEpochResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Fatalf("BeginQuorumEpoch for node 3's directory: %s", raft.ErrorName(p.ErrorCode))
	}
}

// EndQuorumEpoch names the preferred candidates by id and directory id: a
// node named first, but with another directory, is not the one meant and
// waits as if unnamed, where the one meant stands at once.
func TestEndQuorumEpochCandidateKey(t *testing.T) {
	for _, c := range []struct {
		dir  raft.DirectoryID
		want raft.Role
	}{{dirOf(2), raft.Prospective}, {raft.DirectoryID{}, raft.Prospective}, {dirOf(77), raft.Follower}} {
		h := newDynamicHarness(t, []int32{1, 2, 3}, []int32{1, 2, 3})
		h.elect(1)
		epoch := h.status(1).Epoch
		req := endReq(1, epoch, 2, 3)
		req.Topics[0].Partitions[0].PreferredCandidates[0].CandidateDirectoryID = c.dir
		h.request(2, 1, req)
		if got := h.status(2).Role; got != c.want {
			t.Errorf("first candidate with directory %x: node 2 is %v, want %v", c.dir, got, c.want)
		}
	}
}

// A vote is for a replica, id and directory: in the epoch it voted, a node
// grants its vote again to the same candidate but not to one with the
// candidate's id and another directory, also after a restart, since the
// quorum state remembers the directory (data_version 1).
func TestVoteRemembersTheCandidatesDirectory(t *testing.T) {
	h := newDynamicHarness(t, []int32{1, 2, 3}, []int32{1, 2, 3})
	h.elect(1)
	st := h.status(2)
	epoch := st.Epoch + 1
	vote := func(candidateDir raft.DirectoryID) bool {
		req := voteReq(3, epoch, st.Epoch, 1<<40, false)
		req.VoterID = 2
		p := &req.Topics[0].Partitions[0]
		p.VoterDirectoryID, p.CandidateDirectoryID = dirOf(2), candidateDir
		r := h.request(2, 3, req).(*kmsg.VoteResponse).Topics[0].Partitions[0]
		if r.ErrorCode != 0 {
			t.Fatalf("vote: %s", raft.ErrorName(r.ErrorCode))
		}
		return r.VoteGranted
	}
	if !vote(dirOf(3)) {
		t.Fatal("node 2 refused candidate 3's first vote request")
	}
	stored, err := h.nodes[2].store.Read()
	if err != nil || stored.DataVersion != 1 || stored.VotedID != 3 || stored.VotedDirectoryID != dirOf(3) {
		t.Fatalf("quorum state after the vote: %+v %v", stored, err)
	}
	for round := range 2 {
		if !vote(dirOf(3)) {
			t.Errorf("round %d: the voted candidate's request again was refused", round)
		}
		if vote(dirOf(99)) {
			t.Errorf("round %d: granted the vote to node 3 of another directory", round)
		}
		h.crash(2)
		h.start(2)
	}
}
