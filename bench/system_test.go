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
)

// TestSystemsCommit starts each registered system in both flush modes,
// proposes a few records from several goroutines and checks every one
// commits.
func TestSystemsCommit(t *testing.T) {
	for _, f := range registry() {
		for _, durable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/flush=%s", f.name, flushName(durable)), func(t *testing.T) {
				sys := f.new()
				if sys.Name() != f.name {
					t.Fatalf("Name() = %q, registered as %q", sys.Name(), f.name)
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

func TestSelectSystems(t *testing.T) {
	all, err := selectSystems("")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(registry()) {
		t.Fatalf("empty list selected %d systems, want all %d", len(all), len(registry()))
	}
	got, err := selectSystems("etcd, hashicorp,etcd")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].name != "etcd" || got[1].name != "hashicorp" {
		t.Fatalf("selected %v, want etcd then hashicorp", names(got))
	}
	if _, err := selectSystems("zookeeper"); err == nil || !strings.Contains(err.Error(), "available: ") {
		t.Fatalf("unknown system: err = %v, want the available list", err)
	}
	if len(kraftlabFactories()) == 0 {
		if _, err := selectSystems("kraftlab"); err == nil || !strings.Contains(err.Error(), "kraftlab.go") {
			t.Fatalf("kraftlab before its adapter: err = %v, want a pointer to kraftlab.go", err)
		}
	}
	if _, err := selectSystems(" , "); err == nil {
		t.Fatal("a list of blanks selected something")
	}
}

func names(fs []factory) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.name)
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
		sys := f.new()
		if err := sys.Start(file, true); err == nil {
			sys.Close()
			t.Fatalf("%s: Start under a regular file succeeded", f.name)
		}
		if err := sys.Close(); err != nil {
			t.Errorf("%s: Close after a failed Start: %v", f.name, err)
		}
	}
}
