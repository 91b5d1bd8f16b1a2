package server

import (
	"slices"
	"testing"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Initial controllers formatted with a voter set of ids alone fill their
// entries in once they listen: DescribeQuorum then names each voter's
// directory id, which only the voter itself knows, and its listener, as
// it would with Kafka's kafka-storage format --initial-controllers. The
// controllers advertise UpdateRaftVoter in ApiVersions, as Kafka's do.
func TestInitialControllersUpdateTheirEntries(t *testing.T) {
	dir, secret, g := dynamicGroup(t)
	ids := []int32{1, 2, 3}
	var all []*Server
	for _, id := range ids {
		all = append(all, dynamicController(t, g, dir, secret, id, ids))
	}
	want := map[int32][16]byte{}
	for _, s := range all {
		meta, err := ReadMetaProperties(NodeDir(dir, s.ID()))
		if err != nil {
			t.Fatal(err)
		}
		want[s.ID()] = meta.DirectoryID
	}
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = raft.DescribeQuorumVersion
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = raft.MetadataTopic
	topic.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	dq.Topics = append(dq.Topics, topic)
	waitFor(t, "every voter's directory id in DescribeQuorum", func() bool {
		l := leaderOf(all...)
		if l == nil {
			return false
		}
		resp := do(t, l.Addr(), dq).(*kmsg.DescribeQuorumResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return false
		}
		voters := resp.Topics[0].Partitions[0].CurrentVoters
		if len(voters) != len(ids) {
			return false
		}
		for _, v := range voters {
			if v.ReplicaDirectoryID != want[v.ReplicaID] {
				return false
			}
		}
		return true
	})

	resp := do(t, all[0].Addr(), kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	if !slices.ContainsFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == kmsg.UpdateRaftVoter.Int16() }) {
		t.Fatal("a controller does not advertise UpdateRaftVoter")
	}
}
