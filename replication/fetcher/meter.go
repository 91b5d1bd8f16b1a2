package fetcher

import (
	"sync"
	"time"
)

// meter measures a byte rate over a fixed number of time windows, the way
// Kafka's sampled Rate does (replication.quota.window.num windows of
// replication.quota.window.size.seconds): the bytes in the windows still
// kept, divided by the time they span.
type meter struct {
	mu      sync.Mutex
	size    time.Duration
	starts  []time.Time
	bytes   []int64
	current int
}

func newMeter(windows int, size time.Duration) *meter {
	return &meter{size: size, starts: make([]time.Time, windows), bytes: make([]int64, windows)}
}

func (m *meter) record(now time.Time, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(now)
	m.bytes[m.current] += n
}

// advance moves to a new window when the current one has ended.
func (m *meter) advance(now time.Time) {
	if m.starts[m.current].IsZero() {
		m.starts[m.current] = now
		return
	}
	if now.Sub(m.starts[m.current]) < m.size {
		return
	}
	m.current = (m.current + 1) % len(m.starts)
	m.starts[m.current] = now
	m.bytes[m.current] = 0
}

// rate is bytes per second over the kept windows. As in Kafka, the elapsed
// time is at least all but one window, so a first burst does not read as an
// enormous rate.
//
// It only reads: a view that asks for the rate moves no window, so that
// how often a screen looks cannot change what a simulated run measures.
func (m *meter) rate(now time.Time) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total int64
	oldest := now
	for i, s := range m.starts {
		if s.IsZero() || now.Sub(s) > m.size*time.Duration(len(m.starts)) {
			continue
		}
		total += m.bytes[i]
		if s.Before(oldest) {
			oldest = s
		}
	}
	elapsed := now.Sub(oldest)
	if floor := m.size * time.Duration(len(m.starts)-1); elapsed < floor {
		elapsed = floor
	}
	if elapsed <= 0 {
		return 0
	}
	return float64(total) / elapsed.Seconds()
}
