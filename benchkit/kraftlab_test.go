package benchkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// fastKraftlab is the kraftlab System on the fast profile's timing, so a
// test that needs an election gets one in a few hundred milliseconds.
func fastKraftlab() *Kraftlab {
	t, _ := cluster.ProfileSettings(cluster.ProfileFast)
	t.AppendLinger = 0
	return NewKraftlab("kraftlab", t)
}

// TestKraftlabCommits starts kraftlab's systems in both flush modes,
// proposes records from several goroutines and checks every one commits on
// all three voters.
func TestKraftlabCommits(t *testing.T) {
	systems := append(KraftlabFactories(), Factory{Name: "kraftlab", New: func() System { return fastKraftlab() }})
	for i, f := range systems {
		for _, durable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d-%s/flush=%s", i, f.Name, flushName(durable)), func(t *testing.T) {
				sys := f.New()
				if sys.Name() != f.Name {
					t.Fatalf("Name() = %q, registered as %q", sys.Name(), f.Name)
				}
				if err := sys.Start(t.TempDir(), durable); err != nil {
					t.Fatalf("Start: %v", err)
				}
				defer sys.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				const writers, each = 4, 5
				var wg sync.WaitGroup
				errs := make(chan error, writers*each)
				for w := range writers {
					wg.Go(func() {
						for i := range each {
							errs <- sys.Propose(ctx, fmt.Appendf(nil, "writer %d record %d", w, i))
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatalf("Propose: %v", err)
					}
				}
				k := sys.(*Kraftlab)
				want := int64(writers * each)
				for _, n := range k.group.Servers() {
					// Every proposal is a load record the loader applies:
					// it has applied them all once it reaches the
					// leader's high watermark with no load error.
					// The leader the writers last used may have lost the
					// leadership since: the highest high watermark is the
					// committed end.
					hwm := int64(0)
					for _, m := range k.group.Servers() {
						hwm = max(hwm, m.Raft().Status().HighWatermark)
					}
					loaded := func() bool {
						return n.Loader().Image().Configs().Resource(image.ConfigResource{Type: record.ResourceTopic, Name: "load!"}) != nil
					}
					poll.Until(t, 10*time.Second, fmt.Sprintf("voter %d to apply the %d records below offset %d", n.ID(), want, hwm),
						func() bool { return n.Loader().Metrics().LastAppliedRecordOffset >= hwm-1 && loaded() },
						func() string {
							return fmt.Sprintf("its loader: %+v, the proposals' configs in its image: %v", n.Loader().Metrics(), loaded())
						})
					if m := n.Loader().Metrics(); m.MetadataLoadErrorCount != 0 {
						t.Errorf("voter %d's loader: %+v", n.ID(), m)
					}
				}
				if err := sys.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if err := sys.Close(); err != nil {
					t.Fatalf("second Close: %v", err)
				}
				if err := sys.Propose(ctx, []byte("late")); err == nil {
					t.Fatal("Propose after Close succeeded")
				}
			})
		}
	}
}

// TestKraftlabProposeFollowsTheLeader kills the leader while writers
// propose: every Propose must still succeed, on the new leader.
func TestKraftlabProposeFollowsTheLeader(t *testing.T) {
	k := fastKraftlab()
	if err := k.Start(t.TempDir(), false); err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old := k.leader.Load()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 2 {
		wg.Go(func() {
			for range 50 {
				errs <- k.Propose(ctx, []byte("record"))
			}
		})
	}
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Propose across a leader kill: %v", err)
		}
	}
	if k.leader.Load() == old {
		t.Fatal("writes still go to the killed leader")
	}
}

// TestKraftlabStartFailureReleasesEverything gives the system a data folder
// it cannot create: Start must fail, and goleak (TestMain) checks that the
// half-built quorum left no goroutine behind.
func TestKraftlabStartFailureReleasesEverything(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sys := fastKraftlab()
	if err := sys.Start(file, true); err == nil {
		sys.Close()
		t.Fatal("Start under a regular file succeeded")
	}
	if err := sys.Close(); err != nil {
		t.Errorf("Close after a failed Start: %v", err)
	}
}
