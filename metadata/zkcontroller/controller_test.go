package zkcontroller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/internal/zookeeper/zktest"
	"github.com/kraftlab/kraftlab/metadata/kafkazk"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sent records what the controller pushed, by broker, and answers it.
type sent struct {
	mu   sync.Mutex
	reqs map[int32][]kmsg.Request
}

func (s *sent) send(_ context.Context, b kafkazk.Broker, req kmsg.Request) (kmsg.Response, error) {
	s.mu.Lock()
	s.reqs[b.ID] = append(s.reqs[b.ID], req)
	s.mu.Unlock()
	return req.ResponseKind(), nil
}

func (s *sent) keys(id int32) []int16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ks []int16
	for _, r := range s.reqs[id] {
		ks = append(ks, r.Key())
	}
	return ks
}

func session(t *testing.T, addr string) *kafkazk.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := kafkazk.Connect(ctx, addr, 2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A controller on a ZooKeeper that already holds a topic: it wins
// /controller at epoch 1, reads the partition, pushes UpdateMetadata
// before LeaderAndIsr to each live broker; when the leader's session
// ends it elects the first live replica of the ISR in assignment order,
// writes it at the next leader epoch and pushes it; it refuses an
// AlterPartition at an old partition epoch and applies one at the
// current one.
func TestControllerFailoverAndElection(t *testing.T) {
	_, zs := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ctlZK := session(t, zs.Addr())
	if err := ctlZK.EnsurePaths(); err != nil {
		t.Fatal(err)
	}
	brokers := map[int32]*kafkazk.Client{}
	epochs := map[int32]int64{}
	for _, id := range []int32{1, 2, 3} {
		brokers[id] = session(t, zs.Addr())
		e, err := brokers[id].RegisterBroker(kafkazk.Broker{ID: id, Endpoints: []kafkazk.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9000 + id}}, Timestamp: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		epochs[id] = e
	}
	id := record.NewUuid(7, 7)
	if err := ctlZK.CreateTopic(kafkazk.Assignment{Topic: "t", ID: id, Replicas: map[int32][]int32{0: {2, 3, 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctlZK.CreatePartitionState(kafkazk.Seat{EpochZkVersion: -1}, "t", 0, kafkazk.LeaderAndIsr{Leader: 2, ISR: []int32{2, 3, 1}}); err == nil {
		t.Fatal("a write fenced by a controller epoch that does not exist went through")
	}

	s := &sent{reqs: map[int32][]kmsg.Request{}}
	c := New(Config{NodeID: 1, ZK: ctlZK, Send: s.send})
	c.Start()
	defer c.Close(true)
	poll.Until(t, 10*time.Second, "the controller managing", func() bool {
		st := c.Status()
		return st.Active && st.LastFailover.Epoch == 1
	})
	// The topic came after the election: the watch on /brokers/topics
	// makes its partition, led by the first live replica.
	poll.Until(t, 10*time.Second, "broker 2 told it leads t-0", func() bool {
		return slices.Contains(s.keys(2), kmsg.LeaderAndISR.Int16())
	})
	if ks := s.keys(3); len(ks) < 2 || ks[0] != kmsg.UpdateMetadata.Int16() {
		t.Fatalf("broker 3 was sent %v, want UpdateMetadata first", ks)
	}
	st, _, err := ctlZK.PartitionState("t", 0)
	if err != nil || st.Leader != 2 || st.LeaderEpoch != 0 || !slices.Equal(st.ISR, []int32{2, 3, 1}) {
		t.Fatalf("t-0's first state: %+v %v", st, err)
	}

	brokers[2].Close() // the leader's session ends
	poll.Until(t, 10*time.Second, "a new leader for t-0", func() bool {
		st, _, _ = ctlZK.PartitionState("t", 0)
		return st.Leader == 3
	})
	if st.LeaderEpoch != 1 || !slices.Equal(st.ISR, []int32{3, 1}) {
		t.Fatalf("after broker 2 left: %+v", st)
	}

	alter := func(partitionEpoch int32) kmsg.AlterPartitionResponseTopicPartition {
		req := kmsg.NewPtrAlterPartitionRequest()
		req.Version, req.BrokerID, req.BrokerEpoch = 3, 3, epochs[3]
		rt := kmsg.NewAlterPartitionRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = 0, 1, partitionEpoch
		m := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		m.BrokerID = 3
		rp.NewEpochISR = append(rp.NewEpochISR, m)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := c.AlterPartition(ctx, req)
		if err != nil || len(resp.Topics) != 1 {
			t.Fatalf("AlterPartition: %+v %v", resp, err)
		}
		return resp.Topics[0].Partitions[0]
	}
	if got := alter(st.ZkVersion - 1); got.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Errorf("AlterPartition at an old partition epoch: %d", got.ErrorCode)
	}
	if got := alter(st.ZkVersion); got.ErrorCode != 0 || got.PartitionEpoch != st.ZkVersion+1 || !slices.Equal(got.ISR, []int32{3}) {
		t.Errorf("AlterPartition at the partition epoch: %+v", got)
	}
}
