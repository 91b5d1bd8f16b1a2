package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// countingPublisher counts the images its loader published.
type countingPublisher struct{ images atomic.Int64 }

func (p *countingPublisher) OnMetadataUpdate(*image.MetadataDelta, *image.MetadataImage, loader.Manifest) {
	p.images.Add(1)
}
func (p *countingPublisher) OnLeaderChange(raft.LeaderAndEpoch) {}

func (ts *testServers) activeController(t *testing.T) *Server {
	t.Helper()
	var leader *Server
	waitFor(t, "a writable leader", func() bool {
		for _, id := range []int32{1, 2, 3} {
			if s := ts.byID[id]; s.Running() && s.Raft().Status().Writable {
				leader = s
				return true
			}
		}
		return false
	})
	return leader
}

// appendRecords commits framed metadata records through the leader's raft
// client and returns the last offset.
func appendRecords(t *testing.T, s *Server, recs ...record.Record) int64 {
	t.Helper()
	vals := make([][]byte, len(recs))
	for i, r := range recs {
		v, err := record.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	last, err := s.Raft().Append(s.Raft().Status().Epoch, vals).Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return last
}

func topicRecords(name string, n uint64) []record.Record {
	id := record.NewUuid(n, n+1)
	return []record.Record{
		&record.TopicRecord{Name: name, TopicID: id},
		&record.PartitionRecord{Version: record.PartitionVersion, TopicID: id, Replicas: []int32{101}, Isr: []int32{101}, Leader: 101,
			RemovingReplicas: []int32{}, AddingReplicas: []int32{}, Directories: make([]record.Uuid, 1)},
	}
}

// waitSameImage waits until every running node's loader has published the
// leader's image.
func (ts *testServers) waitSameImage(t *testing.T, leader *Server, last int64) {
	t.Helper()
	for _, id := range []int32{1, 2, 3, 101} {
		s := ts.byID[id]
		waitFor(t, fmt.Sprintf("node %d's loader to reach offset %d", id, last), func() bool {
			return s.Loader().Image().Provenance().LastContainedOffset >= last &&
				leader.Loader().Image().Equal(s.Loader().Image())
		})
	}
}

// Records appended on the active controller reach every node's loader over
// real sockets, controllers and broker alike; a node restarted after a
// snapshot rebuilds the same image from the snapshot and the tail, in a
// fresh loader whose publishers are made anew.
func TestEveryNodeLoadsTheMetadataLog(t *testing.T) {
	var mu sync.Mutex
	pubs := map[int32][]*countingPublisher{}
	var loadErrors atomic.Int64
	ts := startServersWith(t, 600*time.Millisecond, func(cfg *Config) {
		id := cfg.Raft.Raft.NodeID
		cfg.Publishers = func() []loader.Publisher {
			mu.Lock()
			defer mu.Unlock()
			p := &countingPublisher{}
			pubs[id] = append(pubs[id], p)
			return []loader.Publisher{p}
		}
		cfg.OnLoaderEvent = func(e loader.Event) {
			if e.Kind == loader.EventLoadError {
				loadErrors.Add(1)
			}
		}
	})
	leader := ts.activeController(t)
	last := appendRecords(t, leader, topicRecords("orders", 1)...)
	ts.waitSameImage(t, leader, last)
	for _, id := range []int32{1, 2, 3, 101} {
		img := ts.byID[id].Loader().Image()
		if img.Topics().TopicByName("orders") == nil {
			t.Errorf("node %d's image lacks topic orders", id)
		}
		mu.Lock()
		n := pubs[id][0].images.Load()
		mu.Unlock()
		if n == 0 {
			t.Errorf("node %d's publisher saw no image", id)
		}
	}

	// Snapshot a follower, kill it, write more, start it again.
	var down *Server
	for _, id := range []int32{1, 2, 3} {
		if ts.byID[id] != leader {
			down = ts.byID[id]
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := down.Raft().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.EndOffset != down.Loader().Image().Provenance().LastContainedOffset+1 {
		t.Errorf("snapshot %v, loader image at %v", snap, down.Loader().Image().Provenance())
	}
	before := down.Loader()
	if err := down.Kill(); err != nil {
		t.Fatal(err)
	}
	last = appendRecords(t, leader, topicRecords("clicks", 2)...)
	if err := down.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ts.waitSameImage(t, leader, last)
	if down.Loader() == before {
		t.Fatal("the restarted node kept its old loader")
	}
	if m := down.Loader().Metrics(); m.HandleLoadSnapshotCount != 1 {
		t.Errorf("the restarted node's loader metrics %+v: want its snapshot loaded", m)
	}
	mu.Lock()
	if len(pubs[down.ID()]) != 2 {
		t.Errorf("node %d's publishers were made %d times, want once per start", down.ID(), len(pubs[down.ID()]))
	}
	mu.Unlock()
	if n := loadErrors.Load(); n != 0 {
		t.Errorf("%d load errors", n)
	}
}

// The server makes its raft client's listener: a config that brings its
// own is refused, and Loader is nil before the first start.
func TestServerOwnsItsListener(t *testing.T) {
	rc := raft.DefaultConfig()
	rc.NodeID, rc.Voters, rc.ClusterID = 1, []int32{1}, testClusterID
	cfg := Config{Kind: Controller, Raft: quorum.Config{Raft: rc, Dir: t.TempDir(), Peers: func(int32) (string, bool) { return "", false }, Flush: storage.FlushNever, Secret: "s"}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Loader() != nil {
		t.Error("a server that never started has a loader")
	}
	cfg.Raft.NewListener = func() quorum.Listener { return loader.New(loader.Config{}) }
	if _, err := New(cfg); err == nil {
		t.Error("New accepted a Raft.NewListener of its own")
	}
}
