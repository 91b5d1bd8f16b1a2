package engine_test

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
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/server"
)

// diskFullSize is each controller's tmpfs: room for the metadata log of a
// few seconds of the fast profile, and little enough to fill at once.
const diskFullSize = "4m"

// The disk under every controller fills up, then space returns. The
// controllers that must write stop on ENOSPC, saying so, and start again
// by themselves once their folders take writes: the quorum elects a
// leader and the canary is acknowledged without anyone starting a node by
// hand, and no committed metadata is lost. The controllers' folders are tmpfs mounts, a
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
	ht := openHostileAt(t, dataDir, nil)
	v := ht.p.View()
	committed := highWatermark(&v)

	filled := time.Now()
	for _, dir := range dirs {
		fill(t, dir)
	}
	// The quorum is lost: no controller leads, and those that had to
	// write (the leader on its next record, a voter as it stands or votes)
	// stopped on their full disks, a majority at least. A voter that never
	// had to write may run on, asking for pre-votes it cannot turn into
	// an election.
	var saw string
	var stopped []view.Node
	poll.Until(t, hostileRecovery, "the controllers to stop on their full disks", func() bool {
		v := ht.p.View()
		var b strings.Builder
		stopped = stopped[:0]
		leads := false
		for _, n := range v.Nodes {
			if n.Kind != view.KindController {
				continue
			}
			fmt.Fprintf(&b, "node %d %s %s %q; ", n.ID, n.State, n.Role, n.Error)
			if n.State == view.StateFailed {
				stopped = append(stopped, n)
			}
			leads = leads || (n.Live() && n.Role == view.RoleLeader)
		}
		saw = b.String()
		return !leads && len(stopped) > len(dirs)/2
	}, func() string { return saw + "\n" + describeNodes(ht.p) })
	t.Logf("disk full: %d controllers stopped and no leader within %v: %s", len(stopped), time.Since(filled).Round(time.Millisecond), saw)
	for _, n := range stopped {
		if !strings.HasPrefix(n.Error, "disk full: ") {
			t.Errorf("node %d failed with %q: the view does not say its disk is full", n.ID, n.Error)
		}
		poll.Until(t, hostileRecovery, fmt.Sprintf("node %d probing its full disk", n.ID), func() bool {
			v := ht.p.View()
			m, _ := v.Node(n.ID)
			return m != nil && m.State == view.StateFailed && m.Restart != nil &&
				m.Restart.Attempts > 0 && strings.HasPrefix(m.Restart.LastError, "disk full: ")
		}, func() string { return describeNodes(ht.p) })
	}

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
	for _, n := range stopped {
		told := map[cluster.EventKind]bool{}
		poll.Until(t, hostileRecovery, fmt.Sprintf("the event log to tell node %d's stop and restart", n.ID), func() bool {
			for _, e := range ht.p.EventStream().Since(0) {
				if e.Node == n.ID && (e.Kind == cluster.EventNodeRestarted ||
					e.Kind == cluster.EventNodeFailed && strings.Contains(e.Message, "disk full: ") && strings.Contains(e.Message, "starts again by itself")) {
					told[e.Kind] = true
				}
			}
			return told[cluster.EventNodeFailed] && told[cluster.EventNodeRestarted]
		}, func() string { return describeNodes(ht.p) })
	}
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
