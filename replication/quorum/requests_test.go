package quorum

import (
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func voteRequest(to, epoch int32) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = raft.VoteVersion
	id := testClusterID
	req.ClusterID = &id
	req.VoterID = to
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID = epoch, 3
	t := kmsg.NewVoteRequestTopic()
	t.Topic = raft.MetadataTopic
	t.Partitions = []kmsg.VoteRequestTopicPartition{p}
	req.Topics = []kmsg.VoteRequestTopic{t}
	return req
}

func beginQuorumEpoch(leader, epoch int32) *kmsg.BeginQuorumEpochRequest {
	req := kmsg.NewPtrBeginQuorumEpochRequest()
	req.Version = raft.BeginQuorumEpochVersion
	id := testClusterID
	req.ClusterID = &id
	p := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	p.LeaderID, p.LeaderEpoch = leader, epoch
	t := kmsg.NewBeginQuorumEpochRequestTopic()
	t.Topic = raft.MetadataTopic
	t.Partitions = []kmsg.BeginQuorumEpochRequestTopicPartition{p}
	req.Topics = []kmsg.BeginQuorumEpochRequestTopic{t}
	return req
}
