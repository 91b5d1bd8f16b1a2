package raft_test

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request builders shared by the Go tests and the transcripts. The
// behaviours of Kafka 4.2+ that these tests once checked one by one are
// told as protocol stories in testdata/ (TestTranscripts).

func voteReq(candidate, epoch, lastEpoch int32, lastOffset int64, preVote bool) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = raft.VoteVersion
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch, p.LastOffset, p.PreVote = epoch, candidate, lastEpoch, lastOffset, preVote
	tp := kmsg.NewVoteRequestTopic()
	tp.Topic = raft.MetadataTopic
	tp.Partitions = []kmsg.VoteRequestTopicPartition{p}
	req.Topics = []kmsg.VoteRequestTopic{tp}
	return req
}

func beginReq(leader, epoch int32) *kmsg.BeginQuorumEpochRequest {
	req := kmsg.NewPtrBeginQuorumEpochRequest()
	req.Version = raft.BeginQuorumEpochVersion
	p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = leader, epoch
	t := kmsg.NewBeginQuorumEpochRequestTopic()
	t.Topic = raft.MetadataTopic
	t.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.BeginQuorumEpochRequestTopic{t}
	return req
}

func endReq(leader, epoch int32, successors ...int32) *kmsg.EndQuorumEpochRequest {
	req := kmsg.NewPtrEndQuorumEpochRequest()
	req.Version = raft.EndQuorumEpochVersion
	p := kmsg.NewEndQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = leader, epoch
	for _, s := range successors {
		c := kmsg.NewEndQuorumEpochRequestTopicPartitionPreferredCandidate()
		c.CandidateID = s
		p.PreferredCandidates = append(p.PreferredCandidates, c)
	}
	t := kmsg.NewEndQuorumEpochRequestTopic()
	t.Topic = raft.MetadataTopic
	t.Partitions = []kmsg.EndQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.EndQuorumEpochRequestTopic{t}
	return req
}

// followerFetch takes the Fetch that node id sent to the fake leader.
func followerFetch(t *testing.T, h *harness, id, leader int32) raft.Message {
	t.Helper()
	for range 100 {
		if got := h.take(func(m raft.Message) bool {
			return m.From == id && m.To == leader && m.Request != nil && m.Request.Key() == kmsg.Fetch.Int16()
		}); len(got) > 0 {
			return got[0]
		}
		h.advance(10 * time.Millisecond)
	}
	t.Fatalf("node %d sent no fetch to %d", id, leader)
	return raft.Message{}
}
