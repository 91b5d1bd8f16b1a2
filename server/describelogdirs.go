package server

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/replication/fetcher"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// describeLogDirsVersions are the DescribeLogDirs versions Kafka 4.4
// serves; kafka-reassign-partitions asks every replica's broker with it
// (describeReplicaLogDirs) before it reassigns.
var describeLogDirsVersions = wire.APIRange{Key: kmsg.DescribeLogDirs.Int16(), MinVersion: 1, MaxVersion: 5}

// handleDescribeLogDirs is Kafka's handleDescribeLogDirsRequest with
// ReplicaManager.describeLogDirs: the broker's one log directory, its
// volume's size and free space, and each replica asked about (every one
// for no topics) that the broker hosts, with its size and how far its log
// end is below its high watermark.
func (rm *ReplicaManager) handleDescribeLogDirs(req *wire.Request) {
	req.Respond(rm.describeLogDirs(req.Body.(*kmsg.DescribeLogDirsRequest)))
}

func (rm *ReplicaManager) describeLogDirs(r *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := kmsg.NewPtrDescribeLogDirsResponse()
	var want map[fetcher.TopicPartition]bool
	if r.Topics != nil {
		want = map[fetcher.TopicPartition]bool{}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				want[fetcher.TopicPartition{Topic: t.Topic, Partition: p}] = true
			}
		}
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = rm.dir
	if abs, err := filepath.Abs(rm.dir); err == nil {
		dir.Dir = abs
	}
	dir.TotalBytes, dir.UsableBytes = volumeBytes(rm.dir)
	rm.mu.RLock()
	byTopic := map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	for tp, h := range rm.hosted {
		if want != nil && !want[tp] {
			continue
		}
		p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		p.Partition, p.Size = tp.Partition, h.p.Size()
		p.OffsetLag = max(h.p.HighWatermark()-h.p.LogEndOffset(), 0)
		byTopic[tp.Topic] = append(byTopic[tp.Topic], p)
	}
	rm.mu.RUnlock()
	for name, parts := range byTopic {
		slices.SortFunc(parts, func(a, b kmsg.DescribeLogDirsResponseDirTopicPartition) int {
			return cmp.Compare(a.Partition, b.Partition)
		})
		t := kmsg.NewDescribeLogDirsResponseDirTopic()
		t.Topic, t.Partitions = name, parts
		dir.Topics = append(dir.Topics, t)
	}
	slices.SortFunc(dir.Topics, func(a, b kmsg.DescribeLogDirsResponseDirTopic) int { return strings.Compare(a.Topic, b.Topic) })
	resp.Dirs = []kmsg.DescribeLogDirsResponseDir{dir}
	return resp
}
