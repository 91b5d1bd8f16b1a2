package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// TestSystemsCommit starts each registered system in both flush modes,
// proposes a few records from several goroutines and checks every one
// commits.
func TestSystemsCommit(t *testing.T) {
	for _, f := range registry() {
		if strings.HasPrefix(f.Name, "kraftlab") {
			continue // benchkit's own tests start kraftlab's systems
		}
		for _, durable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/flush=%v", f.Name, durable), func(t *testing.T) {
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
				for w := 0; w < writers; w++ {
					wg.Go(func() {
						for i := 0; i < each; i++ {
							errs <- sys.Propose(ctx, []byte(fmt.Sprintf("writer %d record %d", w, i)))
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

// TestRegistry checks the report's order: kraftlab first (the reference),
// then kraftlab-push and the peers, and that the default selection leaves
// out the optional kraftlab-linger but not kraftlab-push.
func TestRegistry(t *testing.T) {
	all, err := benchkit.SelectSystems(registry(), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(all); strings.Join(got, ",") != "kraftlab,kraftlab-push,hashicorp,etcd" {
		t.Fatalf("default systems %v, want kraftlab,kraftlab-push,hashicorp,etcd", got)
	}
	got, err := benchkit.SelectSystems(registry(), "etcd, kraftlab-linger,etcd")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names(got), ",") != "etcd,kraftlab-linger" {
		t.Fatalf("selected %v, want etcd then kraftlab-linger", names(got))
	}
	if _, err := benchkit.SelectSystems(registry(), "zookeeper"); err == nil || !strings.Contains(err.Error(), "available: ") {
		t.Fatalf("unknown system: err = %v, want the available list", err)
	}
}

func names(fs []benchkit.Factory) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// TestSystemsStartFailureReleasesEverything gives each system a data folder
// it cannot create: Start must fail, and goleak (TestMain) checks that the
// half-built cluster left no goroutine behind.
func TestSystemsStartFailureReleasesEverything(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range registry() {
		sys := f.New()
		if err := sys.Start(file, true); err == nil {
			sys.Close()
			t.Fatalf("%s: Start under a regular file succeeded", f.Name)
		}
		if err := sys.Close(); err != nil {
			t.Errorf("%s: Close after a failed Start: %v", f.Name, err)
		}
	}
}
