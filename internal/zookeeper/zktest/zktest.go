// Package zktest starts a real ZooKeeper for a test.
package zktest

import (
	"context"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/zookeeper"
)

// Start starts a ZooKeeper in a fresh folder of t's, stopped when the
// test ends. Where ZooKeeper cannot run it skips the test, saying why.
func Start(t testing.TB) (zookeeper.Runtime, *zookeeper.Server) {
	t.Helper()
	rt, err := zookeeper.Find()
	if err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zs, err := zookeeper.Start(ctx, rt, zookeeper.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := zs.Stop(); err != nil {
			t.Error(err)
		}
	})
	return rt, zs
}
