package benchkit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
)

const (
	// openWorkers is how many goroutines an open-loop run keeps ready to
	// propose; a record scheduled while all are busy waits in the queue and
	// that wait counts in its latency.
	openWorkers = 1024
	// openQueue bounds the scheduled records not yet picked up by a worker.
	openQueue = 4096
	// errorBackoff is how long a closed-loop writer waits after a failed
	// proposal before its next one.
	errorBackoff = time.Millisecond
)

// timing is how long one run warms up, measures, and at most waits after
// its window for the proposals still in flight before it declares the
// system stuck.
type timing struct {
	Warmup, Window, Drain time.Duration
	// NodeCPU profiles the window to split the process's CPU by node
	// (nodecpu.go); the profile costs about a percent, so only the runs
	// that report the split ask for it.
	NodeCPU bool
	// Legs stamps every replication message of a single writer's
	// window to split its commits into legs (legs.go), on a System that
	// can be stamped, with records of at least minLegRecordBytes.
	Legs bool
}

// defaultDrain is the Drain of a real run: far above any healthy commit.
const defaultDrain = 30 * time.Second

// load is one way of offering records: a closed loop of Writers goroutines
// each proposing its next record when the last one commits, or an open loop
// proposing Rate records per second on a fixed schedule whatever the system
// does.
type load struct {
	Writers int
	Rate    int
}

func (l load) String() string {
	if l.Rate > 0 {
		return fmt.Sprintf("%d/s", l.Rate)
	}
	if l.Writers == 1 {
		return "1 writer"
	}
	return fmt.Sprintf("%d writers", l.Writers)
}

// measurement is what one run saw in its measured window.
type measurement struct {
	Window   time.Duration
	Records  int64 // committed during the window
	Errors   int64 // failed during the window
	FirstErr error // the first of them
	Latency  Latency
	CPU      time.Duration // process user+system CPU over the window
	CPUKnown bool
	// Machine is how busy every core of the machine was over the window,
	// other processes included.
	Machine      MachineLoad
	MachineKnown bool
	Mallocs      uint64 // heap allocations over the window
	// Wire is what the system's nodes sent over the window, when it
	// counts that (wireCounter).
	Wire      wire.Count
	WireKnown bool
	// Nodes is the window's CPU by node, when timing.NodeCPU asked and
	// the profile could run; NodesErr says why not otherwise.
	Nodes      nodeCPU
	NodesKnown bool
	NodesErr   error
	// Legs holds the window's stamps and proposals when timing.Legs
	// asked and the System could be stamped; nil otherwise.
	Legs *legRecorder
}

// wireCounter is a System that counts the messages its nodes send.
type wireCounter interface {
	// Wire returns the messages and bytes sent so far.
	Wire() wire.Count
}

// drive offers records of size bytes to a started sys: a warm-up first, then
// the measured window. A closed-loop record's latency runs from its Propose to
// its commit; an open-loop record's from its scheduled send time, so a
// system that falls behind is charged for the queue it builds (no
// coordinated omission). Records committed while the window is open count
// toward throughput; an open loop's latency covers every record scheduled
// inside the window, including those that commit after it closes.
//
// Cancelling parent ends the run early: proposals in flight fail and the
// measurement is cut short.
func drive(parent context.Context, sys System, size int, l load, tm timing) (measurement, error) {
	if l.Writers <= 0 && l.Rate <= 0 {
		return measurement{}, fmt.Errorf("load needs writers or a rate")
	}
	payload := make([]byte, size)
	rng := rand.NewChaCha8([32]byte{})
	rng.Read(payload)

	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	var (
		measuring atomic.Bool
		stopping  atomic.Bool
		records   atomic.Int64
		errs      atomic.Int64
		firstErr  atomic.Pointer[error]
		wg        sync.WaitGroup
	)
	start := time.Now()
	t0 := start.Add(tm.Warmup)
	t1 := t0.Add(tm.Window)

	var rec *recorder
	var legs *legRecorder
	st, stampable := sys.(stamper)
	if tm.Legs && stampable && l.Rate == 0 && l.Writers == 1 && size >= minLegRecordBytes {
		legs = newLegRecorder(st.Replication())
	}
	if l.Rate > 0 {
		rec = newRecorder(64)
		jobs := make(chan time.Time, openQueue)
		wg.Go(func() { schedule(ctx, jobs, start, t1, l.Rate) })
		for w := 0; w < openWorkers; w++ {
			wg.Go(func() {
				for at := range jobs {
					err := sys.Propose(ctx, payload)
					end := time.Now()
					inWindow := !at.Before(t0) && at.Before(t1)
					if err != nil {
						if inWindow {
							errs.Add(1)
							keepFirst(&firstErr, err)
						}
						continue
					}
					if measuring.Load() {
						records.Add(1)
					}
					if inWindow {
						rec.record(w, end.Sub(at))
					}
				}
			})
		}
	} else {
		rec = newRecorder(l.Writers)
		for w := 0; w < l.Writers; w++ {
			wg.Go(func() {
				for !stopping.Load() {
					begin := time.Now()
					err := sys.Propose(ctx, payload)
					end := time.Now()
					if err != nil {
						if measuring.Load() {
							errs.Add(1)
							keepFirst(&firstErr, err)
						}
						// A leaderless cluster fails proposals at once;
						// retrying in a tight loop would starve the
						// election that ends it.
						time.Sleep(errorBackoff)
						continue
					}
					if !measuring.Load() {
						continue
					}
					records.Add(1)
					rec.record(w, end.Sub(begin))
					if legs != nil {
						legs.proposal(begin, end)
					}
				}
			})
		}
	}

	sleepCtx(ctx, time.Until(t0))
	cpu0, cpuOK0 := cpuTime()
	mach0, machOK0 := machineTicks()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs0 := ms.Mallocs
	wc, counted := sys.(wireCounter)
	var wire0 wire.Count
	if counted {
		wire0 = wc.Wire()
	}
	var prof *nodeProfile
	var profErr error
	if tm.NodeCPU {
		prof, profErr = startNodeProfile()
	}
	if legs != nil {
		st.SetStamper(legs.stamp)
		legs.start(time.Now())
	}
	measuring.Store(true)
	begin := time.Now()

	// The window is timed from when counting began, since the snapshots
	// above may have taken a moment.
	sleepCtx(ctx, time.Until(begin.Add(tm.Window)))
	measuring.Store(false)
	end := time.Now()
	stopping.Store(true)
	if legs != nil {
		st.SetStamper(nil)
	}
	cpu1, cpuOK1 := cpuTime()
	mach1, machOK1 := machineTicks()
	var nodes nodeCPU
	if prof != nil {
		nodes, profErr = prof.stop()
	}
	runtime.ReadMemStats(&ms)
	var wire1 wire.Count
	if counted {
		wire1 = wc.Wire()
	}

	m := measurement{
		Window:   end.Sub(begin),
		CPU:      cpu1 - cpu0,
		CPUKnown: cpuOK0 && cpuOK1,
		Mallocs:  ms.Mallocs - mallocs0,
	}
	if tm.NodeCPU {
		m.Nodes, m.NodesKnown, m.NodesErr = nodes, profErr == nil, profErr
	}
	m.Legs = legs
	if counted {
		m.Wire = wire.Count{Messages: wire1.Messages - wire0.Messages, Bytes: wire1.Bytes - wire0.Bytes}
		m.WireKnown = true
	}
	if machOK0 && machOK1 {
		m.Machine, m.MachineKnown = loadBetween(mach0, mach1)
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(tm.Drain):
		// A proposal that never returns would hang the whole matrix; closing
		// the system fails it.
		cancel()
		sys.Close()
		<-done
		m.Records = records.Load()
		return m, fmt.Errorf("%s: proposals still pending %v after the window; closed the system", sys.Name(), tm.Drain)
	}
	// Counted only now that every writer is joined: a writer preempted
	// between its window check and its counter still counts the record
	// whose latency it recorded.
	m.Records = records.Load()
	m.Errors = errs.Load()
	if e := firstErr.Load(); e != nil {
		m.FirstErr = *e
	}
	m.Latency = rec.merged().summary()
	return m, nil
}

// schedule sends the send time of every record due from start, rate per
// second, until the window ends at t1. A late wake-up sends every record
// that fell due meanwhile, each with its own scheduled time.
func schedule(ctx context.Context, jobs chan<- time.Time, start, t1 time.Time, rate int) {
	defer close(jobs)
	preciseSleeper()
	interval := float64(time.Second) / float64(rate)
	for i := 0; ; i++ {
		at := start.Add(time.Duration(float64(i) * interval))
		if !at.Before(t1) {
			return
		}
		sleepUntil(at)
		select {
		case jobs <- at:
		case <-ctx.Done():
			return
		}
	}
}

// keepFirst stores err in first unless an error is there already. It is
// kept out of line so that only failed proposals pay for err's escape.
//
//go:noinline
func keepFirst(first *atomic.Pointer[error], err error) {
	first.CompareAndSwap(nil, &err)
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
