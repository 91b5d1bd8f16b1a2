package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A flood of one error passes a burst per interval, and the first record
// after a hold-back says how many were held; other messages and lower
// levels are not held back by it.
func TestFloodIsBounded(t *testing.T) {
	var buf bytes.Buffer
	h := newRateHandler(slog.NewTextHandler(&buf, nil), slog.LevelWarn, 3, time.Second)
	now := time.Unix(0, 0)
	h.now = func() time.Time { return now }
	log := slog.New(h).With("node", 1)
	for i := range 10_000 {
		log.Error("cannot host partition", "partition", i)
	}
	log.Error("another failure")
	log.Info("fine")
	if n := strings.Count(buf.String(), "cannot host partition"); n != 3 {
		t.Fatalf("%d lines of the flood in one interval, want 3:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "another failure") || !strings.Contains(buf.String(), "fine") {
		t.Fatalf("other records were held back:\n%s", buf.String())
	}
	buf.Reset()
	now = now.Add(time.Second)
	log.Error("cannot host partition", "partition", 1)
	if !strings.Contains(buf.String(), "suppressed=9997") {
		t.Fatalf("the count of held-back records is missing: %s", buf.String())
	}
	if !h.Enabled(context.Background(), slog.LevelError) {
		t.Fatal("not enabled")
	}
}
