package server

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func pushLeaderAndIsr(controllerEpoch int32, brokerEpoch int64, leader, leaderEpoch int32) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 7, 1, controllerEpoch, brokerEpoch
	t := kmsg.NewLeaderAndISRRequestTopicState()
	t.Topic, t.TopicID = "t", record.NewUuid(1, 1)
	p := kmsg.NewLeaderAndISRRequestTopicPartition()
	p.Topic, p.Partition, p.Leader, p.LeaderEpoch, p.ISR, p.Replicas = "t", 0, leader, leaderEpoch, []int32{1, 2}, []int32{1, 2}
	t.PartitionStates = append(t.PartitionStates, p)
	req.TopicStates = append(req.TopicStates, t)
	return req
}

// A ZooKeeper-era broker takes the controller's pushes in order: none
// before it registered, and then an older controller epoch, an older
// session's broker epoch and a leader epoch that does not grow are
// refused, as Kafka 3.9's broker refuses them; a newer broker epoch is
// taken. What it takes reaches its image, a delta at a time, the same as
// an image made anew.
func TestZkMetadataFencesPushes(t *testing.T) {
	var got *image.MetadataImage
	m := newZkMetadata(2, func(_ *image.MetadataDelta, img *image.MetadataImage) { got = img })
	for _, be := range []int64{99, 100, -1} {
		if r := m.leaderAndIsr(pushLeaderAndIsr(5, be, 1, 3)); r.ErrorCode != kerr.StaleBrokerEpoch.Code {
			t.Errorf("broker epoch %d before the broker registered: %d", be, r.ErrorCode)
		}
	}
	if got != nil || m.controller() != -1 {
		t.Fatalf("a push before the broker registered reached its metadata")
	}
	m.setBrokerEpoch(100)

	if r := m.leaderAndIsr(pushLeaderAndIsr(5, 100, 1, 3)); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("first push: %+v", r)
	}
	if p := got.Topics().TopicByName("t").Partition(0); p.Leader != 1 || p.LeaderEpoch != 3 {
		t.Fatalf("image after the push: %+v", p)
	}
	if r := m.leaderAndIsr(pushLeaderAndIsr(4, 100, 2, 4)); r.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Errorf("older controller epoch: %d", r.ErrorCode)
	}
	if r := m.leaderAndIsr(pushLeaderAndIsr(5, 99, 2, 4)); r.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Errorf("older broker epoch: %d", r.ErrorCode)
	}
	if r := m.leaderAndIsr(pushLeaderAndIsr(5, 100, 2, 3)); r.Topics[0].Partitions[0].ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Errorf("same leader epoch: %+v", r.Topics[0].Partitions[0])
	}
	if r := m.leaderAndIsr(pushLeaderAndIsr(6, -1, 2, 4)); r.ErrorCode != 0 || m.controller() != 1 {
		t.Errorf("newer controller epoch, no broker epoch: %+v", r)
	}
	if p := got.Topics().TopicByName("t").Partition(0); p.Leader != 2 || p.LeaderEpoch != 4 {
		t.Fatalf("image after the second push: %+v", p)
	}
	if r := m.leaderAndIsr(pushLeaderAndIsr(6, 101, 1, 5)); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Errorf("newer broker epoch: %+v", r)
	}
	m.mu.Lock()
	whole := m.imageLocked()
	m.mu.Unlock()
	if !whole.Topics().Equal(got.Topics()) {
		t.Errorf("the delta's image differs from one made anew")
	}
}

// An UpdateMetadata naming leader -2 for a topic's partitions deletes
// the topic from the broker's image.
func TestZkMetadataDeletesATopic(t *testing.T) {
	var got *image.MetadataImage
	m := newZkMetadata(2, func(_ *image.MetadataDelta, img *image.MetadataImage) { got = img })
	m.setBrokerEpoch(100)
	if r := m.leaderAndIsr(pushLeaderAndIsr(1, -1, 1, 0)); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 8, 1, 1, -1
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic, ts.TopicID = "t", record.NewUuid(1, 1)
	p := kmsg.NewUpdateMetadataRequestTopicPartition()
	p.Topic, p.Partition, p.Leader = "t", 0, leaderDuringDelete
	ts.PartitionStates = append(ts.PartitionStates, p)
	req.TopicStates = append(req.TopicStates, ts)
	if r := m.updateMetadata(req); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	if got.Topics().TopicByName("t") != nil {
		t.Fatal("the deleted topic is still in the image")
	}
}
