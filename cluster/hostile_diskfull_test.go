package cluster_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/server"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// diskFullSize is each controller's tmpfs: room for the metadata log of a
// few seconds of the fast profile, and little enough to fill at once.
const diskFullSize = "4m"

// The disk under every controller fills up, then space returns. The
// controllers stop on ENOSPC, saying so, and start again by themselves
// once their folders take writes: the quorum elects a leader and the
// canary is acknowledged without anyone starting a node by hand, and no
// committed metadata is lost. The controllers' folders are tmpfs mounts, a
// real full disk; where mounting is not allowed the probe skips, and the
// storage, quorum and server tests cover the same paths with disktest.
func TestHostileDiskFull(t *testing.T) {
	dataDir := t.TempDir()
	var dirs []string
	for _, id := range []int32{1, 2, 3} {
		dir := server.NodeDir(dataDir, id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+diskFullSize); err != nil {
			t.Skipf("cannot mount a tmpfs to fill (%v): this probe needs CAP_SYS_ADMIN; a full disk is covered without it by the storage, quorum and server tests", err)
		}
		// Registered before the playground's Close, so it runs after it.
		t.Cleanup(func() {
			if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		})
		dirs = append(dirs, dir)
	}
	ht := openHostileAt(t, dataDir)
	v := ht.p.View()
	committed := highWatermark(&v)

	filled := time.Now()
	for _, dir := range dirs {
		fill(t, dir)
	}
	var saw string
	var failed []view.Node
	poll.Until(t, hostileRecovery, "every controller stopped on its full disk", func() bool {
		v := ht.p.View()
		var b strings.Builder
		failed = failed[:0]
		for _, n := range v.Nodes {
			if n.Kind != view.KindController {
				continue
			}
			fmt.Fprintf(&b, "node %d %s %q; ", n.ID, n.State, n.Error)
			if n.State == view.StateFailed {
				failed = append(failed, n)
			}
		}
		saw = b.String()
		return len(failed) == len(dirs)
	}, func() string { return saw + "\n" + describeNodes(ht.p) })
	t.Logf("disk full: every controller stopped within %v: %s", time.Since(filled).Round(time.Millisecond), saw)
	for _, n := range failed {
		if !strings.HasPrefix(n.Error, "disk full: ") {
			t.Errorf("node %d failed with %q: the view does not say its disk is full", n.ID, n.Error)
		}
	}
	poll.Until(t, hostileRecovery, "every controller probing its full disk", func() bool {
		v := ht.p.View()
		probing := 0
		for _, n := range v.Nodes {
			if n.Kind == view.KindController && n.State == view.StateFailed && n.Restart != nil &&
				n.Restart.Attempts > 0 && strings.HasPrefix(n.Restart.LastError, "disk full: ") {
				probing++
			}
		}
		return probing == len(dirs)
	}, func() string { return describeNodes(ht.p) })

	freed := time.Now()
	for _, dir := range dirs {
		if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
			t.Fatal(err)
		}
	}
	ht.checkServing(t, "after space returned")
	t.Logf("space returned: serving again in %v", time.Since(freed).Round(time.Millisecond))
	after := ht.p.View()
	if hwm := highWatermark(&after); hwm < committed {
		t.Errorf("high watermark %d after the disk filled, %d before: committed metadata was lost", hwm, committed)
	}
	told := map[cluster.EventKind]map[int32]bool{cluster.EventNodeFailed: {}, cluster.EventNodeRestarted: {}}
	poll.Until(t, hostileRecovery, "the event log to tell each controller's stop and restart", func() bool {
		for _, e := range ht.p.EventStream().Since(0) {
			switch {
			case e.Kind == cluster.EventNodeFailed && strings.Contains(e.Message, "disk full: ") && strings.Contains(e.Message, "starts again by itself"),
				e.Kind == cluster.EventNodeRestarted:
				told[e.Kind][e.Node] = true
			}
		}
		return len(told[cluster.EventNodeFailed]) == len(dirs) && len(told[cluster.EventNodeRestarted]) == len(dirs)
	}, func() string { return describeNodes(ht.p) })
}

// fill writes dir/filler until the file system is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		_, err := f.Write(chunk)
		if errors.Is(err, syscall.ENOSPC) {
			return
		}
		if err != nil {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
}

// highWatermark is the quorum leader's high watermark, -1 without one.
func highWatermark(v *view.View) int64 {
	if l, ok := v.Leader(); ok {
		return l.HighWatermark
	}
	return -1
}
