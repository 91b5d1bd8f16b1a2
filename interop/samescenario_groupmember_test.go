package interop

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// groupMember is one kgo group consumer of groupTopic in groupID. A
// goroutine polls it and commits by hand after every poll; it reads no
// more than its budget allows, so that a step can hold it back (the
// members join before reading, so that no partition moves with records
// read and not committed) or let it read part of what is there.
type groupMember struct {
	name string
	cl   *kgo.Client
	// log is what kgo logged, at info level, printed when the test fails.
	log *lockedBuffer

	mu     sync.Mutex
	got    map[string]int
	budget int // records it may still read; -1 without a limit
	// commitErrs counts failed commits (while the coordinator moves).
	commitErrs int
	// idle is set while the loop waits for a budget.
	idle   bool
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func startGroupMember(seeds []string, name string, opts ...kgo.Opt) (*groupMember, error) {
	log := &lockedBuffer{}
	opts = append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID(name),
		kgo.WithLogger(kgo.BasicLogger(log, kgo.LogLevelInfo, func() string { return time.Now().Format("15:04:05.000 ") })),
		kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(groupTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.MetadataMinAge(250 * time.Millisecond), kgo.FetchMaxWait(250 * time.Millisecond),
		// A heartbeat every 500 ms, retried little: a member's session
		// ends within a second of its coordinator's kill, long before a
		// new one serves the group, so that it rejoins on both systems.
		kgo.HeartbeatInterval(500 * time.Millisecond), kgo.RequestRetries(3),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond })}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupMember{name: name, cl: cl, log: log, got: map[string]int{}, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go m.loop(ctx)
	return m, nil
}

func (m *groupMember) loop(ctx context.Context) {
	defer close(m.done)
	for ctx.Err() == nil {
		m.mu.Lock()
		n := m.budget
		m.idle = n == 0
		m.mu.Unlock()
		if n == 0 {
			select {
			case <-m.wake:
			case <-ctx.Done():
			}
			continue
		}
		if n < 0 {
			n = 1000
		}
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := m.cl.PollRecords(pctx, n)
		cancel()
		m.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			m.got[string(r.Value)]++
			if m.budget > 0 {
				m.budget--
			}
		})
		m.mu.Unlock()
		if m.cl.UncommittedOffsets() != nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := m.cl.CommitUncommittedOffsets(cctx); err != nil {
				m.mu.Lock()
				m.commitErrs++
				m.mu.Unlock()
			}
			cancel()
		}
	}
}

// allow lets the member read n more records (-1: all there are).
func (m *groupMember) allow(n int) {
	m.mu.Lock()
	m.budget = n
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// held reports whether the member waits for a budget: it reads nothing
// until allowed to.
func (m *groupMember) held() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.idle
}

// leave stops the polling and closes the client, which leaves the group
// (everything read was committed after its poll).
func (m *groupMember) leave() {
	m.cancel()
	<-m.done
	m.cl.Close()
}

// read is how many distinct values the member read.
func (m *groupMember) read() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.got)
}
