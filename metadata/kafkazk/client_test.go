package kafkazk

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/zookeeper/zktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func connect(t *testing.T) (*Client, func() *Client) {
	t.Helper()
	_, zs := zktest.Start(t)
	another := func() *Client {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := Connect(ctx, zs.Addr(), 2*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	c := another()
	if err := c.EnsurePaths(); err != nil {
		t.Fatal(err)
	}
	return c, another
}

// One broker wins /controller and bumps the epoch; a second cannot; the
// winner's writes are fenced by the epoch's zkVersion, so once another
// controller took over, the old one's write fails as moved, and a write
// at a stale partition zkVersion fails as such.
func TestElectionFencesTheOldController(t *testing.T) {
	c1, another := connect(t)
	c2 := another()
	seat1, err := c1.Elect(1, time.Now())
	if err != nil || seat1.Epoch != 1 {
		t.Fatalf("first election: %+v, %v", seat1, err)
	}
	if _, err := c2.Elect(2, time.Now()); !errors.Is(err, ErrNotElected) {
		t.Fatalf("second broker while the first holds /controller: %v", err)
	}
	if err := c1.CreateTopic(Assignment{Topic: "t", Replicas: map[int32][]int32{0: {1, 2}}}); err != nil {
		t.Fatal(err)
	}
	s, err := c1.CreatePartitionState(seat1, "t", 0, LeaderAndIsr{Leader: 1, ISR: []int32{1, 2}, ControllerEpoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Resign(); err != nil {
		t.Fatal(err)
	}
	seat2, err := c2.Elect(2, time.Now())
	if err != nil || seat2.Epoch != 2 {
		t.Fatalf("second election: %+v, %v", seat2, err)
	}
	s.LeaderEpoch++
	if _, err := c1.UpdatePartitionState(seat1, "t", 0, s); !errors.Is(err, ErrControllerMoved) {
		t.Fatalf("old controller's write: %v, want moved", err)
	}
	next, err := c2.UpdatePartitionState(seat2, "t", 0, s)
	if err != nil || next.ZkVersion != 1 {
		t.Fatalf("new controller's write: %+v, %v", next, err)
	}
	if _, err := c2.UpdatePartitionState(seat2, "t", 0, s); !errors.Is(err, ErrBadVersion) {
		t.Fatalf("write at a stale zkVersion: %v", err)
	}
	got, ok, err := c1.PartitionState("t", 0)
	if err != nil || !ok || got.LeaderEpoch != 1 || got.ZkVersion != 1 {
		t.Fatalf("read back: %+v %v %v", got, ok, err)
	}
}

// A registration's epoch is its czxid, new in each session; while one
// session holds it, another cannot register the same broker.
func TestRegistrationEpochs(t *testing.T) {
	c1, another := connect(t)
	b := Broker{ID: 1, Endpoints: []Endpoint{{"PLAINTEXT", "127.0.0.1", 9092}}, Timestamp: time.Now()}
	e1, err := c1.RegisterBroker(b)
	if err != nil {
		t.Fatal(err)
	}
	c2 := another()
	if _, err := c2.RegisterBroker(b); err == nil {
		t.Fatal("a second session registered the same broker")
	}
	c1.Close()
	e2, err := c2.RegisterBroker(b)
	if err != nil || e2 <= e1 {
		t.Fatalf("re-registration: epoch %d after %d, %v", e2, e1, err)
	}
	got, ok, err := c2.Broker(1)
	if err != nil || !ok || got.Epoch != e2 {
		t.Fatalf("read: %+v %v %v", got, ok, err)
	}
	first, err := c2.AllocateProducerIDs(1, 1000)
	if err != nil || first.Start != 0 || first.End != 999 {
		t.Fatalf("first block: %+v, %v", first, err)
	}
	if next, err := c2.AllocateProducerIDs(2, 1000); err != nil || next.Start != 1000 || next.Broker != 2 {
		t.Fatalf("next block: %+v, %v", next, err)
	}
}
