package fetcher

import (
	"fmt"
	"sync"
)

// flushTarget is a replica that appended from a fetch answer, and what the
// fetch asked for it.
type flushTarget struct {
	sent    sentPartition
	replica Replica
}

// flush makes what the last answer appended durable before the thread's
// next fetch, whose offsets acknowledge it to the leaders: an acks=all
// record then counts only once every in-sync replica holds it as its flush
// policy says. The fsyncs run without the thread's lock, each partition's
// on its own goroutine when there are several, so one slow disk write does
// not add up per partition. A replica whose flush fails is given up, as
// one whose append failed (the log refuses what it cannot make durable).
func (t *Thread) flush(targets []flushTarget) {
	if len(targets) == 0 {
		return
	}
	errs := make([]error, len(targets))
	if len(targets) == 1 {
		errs[0] = targets[0].replica.Flush()
	} else {
		var wg sync.WaitGroup
		for i, f := range targets {
			wg.Go(func() { errs[i] = f.replica.Flush() })
		}
		wg.Wait()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, err := range errs {
		if err == nil {
			continue
		}
		f := targets[i]
		if st, ok := t.parts[f.sent.tp]; ok && st.replica == f.replica && st.CurrentLeaderEpoch == f.sent.leaderEpoch {
			t.markFailedLocked(f.sent.tp, fmt.Errorf("flush %s: %w", f.sent.tp, err))
		}
	}
}
