package server

import (
	"sync"

	"github.com/kraftlab/kraftlab/replication/partition"
)

// logFlusher runs the leaders' deferred flushes (group commit): after an
// append the produce handler asks for a flush and goes on; one goroutine
// per partition at a time fsyncs, then again if appends came meanwhile, so
// one fsync covers every append made while the previous one ran, and
// neither the produce connection nor the partition's lock waits for the
// disk. A flush that moves the high watermark completes what waits on it.
type logFlusher struct {
	rm *ReplicaManager

	mu sync.Mutex
	// state is, per partition with a flush running, whether another was
	// asked for since it started.
	state  map[*partition.Partition]bool
	closed bool
	wg     sync.WaitGroup
}

func newLogFlusher(rm *ReplicaManager) *logFlusher {
	return &logFlusher{rm: rm, state: map[*partition.Partition]bool{}}
}

// request asks for a flush of p covering every append made before it.
func (f *logFlusher) request(p *partition.Partition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if _, running := f.state[p]; running {
		f.state[p] = true
		return
	}
	f.state[p] = false
	f.wg.Add(1)
	go f.run(p)
}

func (f *logFlusher) run(p *partition.Partition) {
	defer f.wg.Done()
	for {
		moved, err := p.Flush(f.rm.clock.Now())
		if err != nil {
			// A closed or failed log: the replica is going away or its
			// log refuses everything; nothing it did not flush counts.
			f.rm.log.Debug("partition flush", "partition", p.Name(), "err", err)
		}
		// acks=1 produces wait for the flushed offset, so the produces
		// are checked even when the high watermark stayed.
		f.rm.produces.CheckAndComplete(p)
		if moved {
			f.rm.fetches.CheckAndComplete(p)
		}
		f.mu.Lock()
		again := f.state[p] && err == nil && !f.closed
		if !again {
			delete(f.state, p)
			f.mu.Unlock()
			return
		}
		f.state[p] = false
		f.mu.Unlock()
	}
}

// close stops new flushes and waits for the running ones.
func (f *logFlusher) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}
