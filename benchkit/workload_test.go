package benchkit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serialSystem commits one record at a time, each taking service, and fails
// every failEvery-th proposal when failEvery is set. It stands in for a real
// quorum so the driver's accounting can be checked against known behaviour.
type serialSystem struct {
	service   time.Duration
	failEvery int64
	block     bool // Propose waits for Close

	mu       sync.Mutex
	n        atomic.Int64
	badSize  atomic.Bool
	size     int
	closed   chan struct{}
	closeOne sync.Once
}

func newSerial(size int) *serialSystem {
	return &serialSystem{size: size, closed: make(chan struct{})}
}

func (s *serialSystem) Name() string                         { return "serial" }
func (s *serialSystem) Start(dir string, durable bool) error { return nil }

func (s *serialSystem) Propose(ctx context.Context, payload []byte) error {
	if len(payload) != s.size {
		s.badSize.Store(true)
	}
	if s.block {
		<-s.closed
		return errors.New("closed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.service > 0 {
		time.Sleep(s.service)
	}
	if n := s.n.Add(1); s.failEvery > 0 && n%s.failEvery == 0 {
		return errors.New("injected failure")
	}
	return nil
}

func (s *serialSystem) Close() error {
	s.closeOne.Do(func() { close(s.closed) })
	return nil
}

func TestDriveClosedLoopCountsWhatCommitsInWindow(t *testing.T) {
	sys := newSerial(16)
	m, err := drive(context.Background(), sys, 16, load{Writers: 4}, timing{Warmup: 20 * time.Millisecond, Window: 100 * time.Millisecond, Drain: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sys.badSize.Load() {
		t.Fatal("a proposal carried a payload of the wrong size")
	}
	if m.Records == 0 || m.Errors != 0 {
		t.Fatalf("records %d, errors %d: want some records and no errors", m.Records, m.Errors)
	}
	if m.Latency.Count != m.Records {
		t.Fatalf("closed loop recorded %d latencies for %d records", m.Latency.Count, m.Records)
	}
	if total := sys.n.Load(); m.Records >= total {
		t.Fatalf("window counted %d of %d proposals; the warm-up's should not count", m.Records, total)
	}
	if m.Window < 100*time.Millisecond {
		t.Fatalf("window %v shorter than asked", m.Window)
	}
}

func TestDriveClosedLoopCountsErrorsApart(t *testing.T) {
	sys := newSerial(8)
	sys.failEvery = 3
	m, err := drive(context.Background(), sys, 8, load{Writers: 2}, timing{Window: 50 * time.Millisecond, Drain: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m.Errors == 0 || m.Records == 0 {
		t.Fatalf("records %d, errors %d: want both", m.Records, m.Errors)
	}
	if m.Latency.Count != m.Records {
		t.Fatalf("failed proposals entered the latency histogram: %d samples for %d records", m.Latency.Count, m.Records)
	}
	if m.FirstErr == nil || m.FirstErr.Error() != "injected failure" {
		t.Fatalf("first error %v, want the injected failure", m.FirstErr)
	}
}

// An open loop must charge a system that cannot keep up for the queue it
// builds: at twice its capacity the backlog grows through the window, so
// late records wait far longer than one service time.
func TestDriveOpenLoopMeasuresFromScheduledTime(t *testing.T) {
	sys := newSerial(4)
	sys.service = 2 * time.Millisecond // at most 500 records/s
	window := 300 * time.Millisecond
	m, err := drive(context.Background(), sys, 4, load{Rate: 1000}, timing{Window: window, Drain: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m.Latency.Count != 300 {
		t.Fatalf("latency covers %d records, want the 300 scheduled in the window", m.Latency.Count)
	}
	if m.Records >= 300 {
		t.Fatalf("%d records committed in the window; a 2 ms serial system cannot do 1000/s", m.Records)
	}
	if m.Latency.P99 < 25*sys.service {
		t.Fatalf("p99 %v: the queue behind a saturated system is missing from the latency", m.Latency.P99)
	}
}

func TestDriveGivesUpOnAStuckSystem(t *testing.T) {
	sys := newSerial(1)
	sys.block = true
	_, err := drive(context.Background(), sys, 1, load{Writers: 2}, timing{Window: 10 * time.Millisecond, Drain: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "still pending") {
		t.Fatalf("err = %v, want a stuck-system error", err)
	}
}

// The allocs/rec column charges the driver's allocations to the system
// under test, so the driver must make none per record.
func TestDriveAllocatesNothingPerRecord(t *testing.T) {
	sys := newSerial(64)
	m, err := drive(context.Background(), sys, 64, load{Writers: 2}, timing{Warmup: 10 * time.Millisecond, Window: 100 * time.Millisecond, Drain: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m.Records < 1000 {
		t.Skipf("only %d records in the window; too few to tell", m.Records)
	}
	if per := float64(m.Mallocs) / float64(m.Records); per > 0.01 {
		t.Fatalf("%.3f allocations per record (%d over %d records)", per, m.Mallocs, m.Records)
	}
}
