package controller

import (
	"context"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOverARealQuorumNode runs the controller on a single-voter
// quorum.Node, fed by the node's metadata loader: it bootstraps metadata.version through the node, registers
// a broker, unfences it and creates a topic, each answered once the node
// committed it.
func TestOverARealQuorumNode(t *testing.T) {
	rc := raft.DefaultConfig()
	rc.NodeID, rc.Voters, rc.ClusterID = 1, []int32{1}, testCluster
	rc.ElectionTimeout, rc.ElectionBackoffMax = 150*time.Millisecond, 150*time.Millisecond
	rc.FetchTimeout, rc.RequestTimeout = 600*time.Millisecond, 600*time.Millisecond
	rc.AppendLinger = time.Millisecond
	var ctl *QuorumController
	node, err := quorum.NewNode(quorum.Config{
		Raft: rc, Dir: t.TempDir(), Flush: storage.FlushNever,
		Peers: func(int32) (string, bool) { return "", false },
		NewListener: func() quorum.Listener {
			return loader.New(loader.Config{NodeID: 1, Publishers: []loader.Publisher{loader.PublisherFuncs{
				Update: func(_ *image.MetadataDelta, img *image.MetadataImage, _ loader.Manifest) {
					ctl.HandleCommittedImage(img)
				},
				Leader: func(l raft.LeaderAndEpoch) { ctl.HandleLeaderChange(l) },
			}}})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err = New(Config{NodeID: 1, ClusterID: testCluster, Raft: node})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer node.Kill()
	poll.Until(t, 10*time.Second, "active", func() bool { _, ok := ctl.Active(); return ok })
	do := func(req kmsg.Request) kmsg.Response {
		ch := make(chan kmsg.Response, 1)
		ctl.box.post(func() { ctl.handle(req, func(r kmsg.Response) { ch <- r }) })
		select {
		case r := <-ch:
			return r
		case <-ctx.Done():
			t.Fatalf("%s not answered", kmsg.NameForKey(req.Key()))
			return nil
		}
	}
	reg := do(registration(101)).(*kmsg.BrokerRegistrationResponse)
	if reg.ErrorCode != 0 {
		t.Fatalf("register: %+v", reg)
	}
	if got := ctl.Brokers(); len(got) != 1 || got[0].Epoch != reg.BrokerEpoch {
		t.Fatalf("broker views %+v", got)
	}
	t.Logf("broker epoch %d, committed offset %d", reg.BrokerEpoch, ctl.Metrics().LastAppliedRecordOffset)
	var hb *kmsg.BrokerHeartbeatResponse
	poll.Until(t, 10*time.Second, "unfenced", func() bool {
		hb = do(heartbeat(101, reg.BrokerEpoch, ctl.Metrics().LastAppliedRecordOffset)).(*kmsg.BrokerHeartbeatResponse)
		return hb.ErrorCode == 0 && !hb.IsFenced
	})
	rt := do(createTopic("real", 2, 1)).(*kmsg.CreateTopicsResponse).Topics[0]
	if rt.ErrorCode != 0 {
		t.Fatalf("create: %+v", rt)
	}
	poll.Until(t, 10*time.Second, "metrics of the committed topic", func() bool {
		m := ctl.Metrics()
		return m.GlobalTopicCount == 1 && m.GlobalPartitionCount == 2 && m.ActiveBrokerCount == 1
	})
}
