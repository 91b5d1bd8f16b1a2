package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestEndOffsetFor(t *testing.T) {
	c := epochCache{entries: []EpochEntry{{1, 0}, {3, 10}, {4, 25}}}
	for _, tc := range []struct {
		ask   int32
		epoch int32
		end   int64
	}{
		{-1, -1, -1}, {0, -1, -1}, {1, 1, 10}, {2, 1, 10}, {3, 3, 25}, {4, 4, 40}, {9, 4, 40},
	} {
		if e, o := c.endOffsetFor(tc.ask, 40); e != tc.epoch || o != tc.end {
			t.Errorf("endOffsetFor(%d) = %d, %d; want %d, %d", tc.ask, e, o, tc.epoch, tc.end)
		}
	}
	var empty epochCache
	if e, o := empty.endOffsetFor(3, 40); e != -1 || o != -1 || empty.lastEpoch() != -1 {
		t.Errorf("empty cache: %d, %d", e, o)
	}
}

func TestEpochCacheEdits(t *testing.T) {
	var c epochCache
	steps := []struct {
		do   func() bool
		want string
		chg  bool
	}{
		{func() bool { return c.assign(1, 0) }, "[{1 0}]", true},
		{func() bool { return c.assign(1, 5) }, "[{1 0}]", false},
		{func() bool { return c.assign(3, 10) }, "[{1 0} {3 10}]", true},
		{func() bool { return c.assign(5, 20) }, "[{1 0} {3 10} {5 20}]", true},
		{func() bool { return c.truncateFromEnd(21) }, "[{1 0} {3 10} {5 20}]", false},
		{func() bool { return c.truncateFromEnd(20) }, "[{1 0} {3 10}]", true},
		{func() bool { return c.truncateFromStart(0) }, "[{1 0} {3 10}]", false},
		{func() bool { return c.truncateFromStart(12) }, "[{3 12}]", true},
		// An epoch that starts where the last one starts replaces it (it wrote nothing).
		{func() bool { return c.assign(6, 12) }, "[{6 12}]", true},
	}
	for i, s := range steps {
		if chg := s.do(); chg != s.chg || fmt.Sprint(c.entries) != s.want {
			t.Fatalf("step %d: %v (changed %v), want %s (changed %v)", i, c.entries, chg, s.want, s.chg)
		}
	}
}

func TestEpochCheckpointFormat(t *testing.T) {
	c := epochCache{entries: []EpochEntry{{0, 0}, {3, 150}}}
	if got := string(c.marshal()); got != "0\n2\n0 0\n3 150\n" {
		t.Fatalf("marshal: %q", got)
	}
	back, err := parseEpochCache(c.marshal())
	if err != nil || fmt.Sprint(back) != fmt.Sprint(c.entries) {
		t.Fatalf("parse: %v %v", back, err)
	}
	for _, bad := range []string{"", "0\n", "1\n0\n", "0\n2\n0 0\n", "0\n1\n0\n", "0\n2\n3 10\n2 20\n",
		"0\n2\n1 10\n2 10\n", "0\n1\n-1 0\n", "0\n1\nx 0\n", "0\n1\n0 0"} {
		if _, err := parseEpochCache([]byte(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

// The log keeps the cache in step with appends, truncations at both ends and
// reopens.
func TestLogEpochs(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, small)
	epochs := []int32{1, 1, 2, 4, 4, 4, 7, 7}
	for i, e := range epochs {
		mustAppend(t, l, e, records(fmt.Sprint(i), 10, 30)) // 10 offsets per batch, several segments
	}
	if got := fmt.Sprint(l.Epochs()); got != "[{1 0} {2 20} {4 30} {7 60}]" {
		t.Fatalf("epochs %s", got)
	}
	check := func(ask, epoch int32, end int64) {
		t.Helper()
		if e, o := l.EndOffsetForEpoch(ask); e != epoch || o != end {
			t.Fatalf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", ask, e, o, epoch, end)
		}
	}
	check(0, -1, -1)
	check(1, 1, 20)
	check(3, 2, 30)
	check(7, 7, 80)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := string(fileBytes(t, filepath.Join(dir, epochCacheFile))); got != "0\n4\n1 0\n2 20\n4 30\n7 60\n" {
		t.Fatalf("checkpoint file %q", got)
	}

	// Truncation at the end forgets epoch 7 and ends epoch 4 at the cut.
	if err := l.TruncateTo(55); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(l.Epochs()); got != "[{1 0} {2 20} {4 30}]" || l.LastEpoch() != 4 {
		t.Fatalf("after TruncateTo(55): %s", got)
	}
	check(7, 4, 50)
	// At the start: epoch 2's start moves up to the new log start.
	if err := l.AdvanceLogStart(25); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(l.Epochs()); got != "[{2 25} {4 30}]" {
		t.Fatalf("after AdvanceLogStart(25): %s", got)
	}
	check(1, -1, -1)
	check(2, 2, 30)
	if got := string(fileBytes(t, filepath.Join(dir, epochCacheFile))); got != "0\n2\n2 25\n4 30\n" {
		t.Fatalf("checkpoint after truncations %q", got)
	}
	mustAppend(t, l, 9, records("n", 1, 30))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := "[{2 25} {4 30} {9 50}]"

	write := func(content string) func(string) error {
		return func(p string) error { return os.WriteFile(p, []byte(content), 0o644) }
	}
	for _, tc := range []struct {
		name    string
		damage  func(path string) error
		rebuilt bool
	}{
		{"kept", func(string) error { return nil }, false},
		{"missing", os.Remove, true},
		{"unreadable", write("0\n3\n2 25\n"), true},
		{"wrong epoch", write("0\n3\n2 25\n5 30\n9 50\n"), true},
		{"missing epoch", write("0\n2\n2 25\n4 30\n"), true},
		// A crash between the log start and epoch checkpoints: not an inconsistency.
		{"before the log start", write("0\n4\n1 0\n2 20\n4 30\n9 50\n"), false},
		// A crash losing unflushed batches of a new epoch.
		{"past the log end", write("0\n4\n2 25\n4 30\n9 50\n10 51\n"), false},
	} {
		name := tc.name
		if err := tc.damage(filepath.Join(dir, epochCacheFile)); err != nil {
			t.Fatal(err)
		}
		l = openLog(t, dir, small)
		if got := fmt.Sprint(l.Epochs()); got != want || l.Recovery().EpochCacheRebuilt != tc.rebuilt {
			t.Fatalf("%s: epochs %s, recovery %v", name, got, l.Recovery())
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if got := string(fileBytes(t, filepath.Join(dir, epochCacheFile))); got != "0\n3\n2 25\n4 30\n9 50\n" {
			t.Fatalf("%s: checkpoint %q", name, got)
		}
	}
}
