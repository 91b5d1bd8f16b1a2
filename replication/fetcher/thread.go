package fetcher

import (
	"context"
	"fmt"
	"sync"
)

// Thread is one replica fetcher thread (Kafka's ReplicaFetcherThread): a
// goroutine fetching a set of partitions from one source broker with one
// Fetch request at a time. It is the I/O around a Machine: it sends the
// machine's requests with cfg.Send, flushes the replicas an answer
// appended to, and waits on cfg.Clock when there is nothing to fetch.
type Thread struct {
	m   *Machine
	cfg Config

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// ThreadName is Kafka's name for the thread fetcherID fetching from broker
// sourceBroker.
func ThreadName(fetcherID int, sourceBroker int32) string {
	return fmt.Sprintf("ReplicaFetcherThread-%d-%d", fetcherID, sourceBroker)
}

func startThread(cfg Config, fetcherID int, leader int32, failed *failedPartitions) *Thread {
	ctx, cancel := context.WithCancel(context.Background())
	t := &Thread{
		m: newMachine(cfg, fetcherID, leader, failed), cfg: cfg,
		wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	go t.run()
	return t
}

// Name is the thread's name, ReplicaFetcherThread-<fetcherId>-<sourceBrokerId>.
func (t *Thread) Name() string { return t.m.Name() }

// SourceBroker is the leader the thread fetches from.
func (t *Thread) SourceBroker() int32 { return t.m.SourceBroker() }

// Stats is a snapshot of the thread and its partitions.
func (t *Thread) Stats() ThreadStats { return t.m.Stats(t.cfg.Clock.Now()) }

// initiateShutdown stops the loop without waiting: an in-flight fetch is
// cancelled through its context.
func (t *Thread) initiateShutdown() { t.cancel() }

// shutdown stops the loop and waits for the goroutine to end.
func (t *Thread) shutdown() {
	t.cancel()
	<-t.done
}

// signal ends a wait for work: partitions were added.
func (t *Thread) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *Thread) run() {
	defer close(t.done)
	for t.ctx.Err() == nil {
		t.m.MaybeTruncate()
		f := t.m.BuildFetch(t.cfg.Clock.Now())
		if f == nil {
			t.waitForWork()
			continue
		}
		t.processFetchRequest(f)
	}
}

// waitForWork waits, when no partition can be fetched, for a partition to
// be added, for the first delay to end, or for the fetch backoff.
func (t *Thread) waitForWork() {
	timer := t.cfg.Clock.NewTimer(t.m.IdleWait(t.cfg.Clock.Now()))
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
	case <-t.wake:
	case <-timer.C:
	}
}

// processFetchRequest sends one fetch, has the machine apply its answer,
// flushes what it appended and resets the partitions answered out of
// range (Kafka's AbstractFetcherThread.processFetchRequest).
func (t *Thread) processFetchRequest(f *Fetch) {
	ctx, cancel := t.cfg.Clock.WithTimeout(t.ctx, t.cfg.SocketTimeout+t.cfg.FetchWaitMax)
	resp, err := t.cfg.Send(ctx, t.m.SourceBroker(), f.Request)
	cancel()
	if t.ctx.Err() != nil {
		return
	}
	next := t.m.HandleFetchResponse(f, resp, err, t.cfg.Clock.Now())
	t.flush(next.Flush)
	for _, r := range next.OutOfRange {
		t.handleOutOfRangeError(r)
	}
}

// flush makes what the last answer appended durable before the thread's
// next fetch, whose offsets acknowledge it to the leaders: an acks=all
// record then counts only once every in-sync replica holds it as its flush
// policy says. The fsyncs run without the machine's lock, each partition's
// on its own goroutine when there are several, so one slow disk write does
// not add up per partition.
func (t *Thread) flush(targets []FlushTarget) {
	if len(targets) == 0 {
		return
	}
	errs := make([]error, len(targets))
	if len(targets) == 1 {
		errs[0] = targets[0].Replica.Flush()
	} else {
		var wg sync.WaitGroup
		for i, f := range targets {
			wg.Go(func() { errs[i] = f.Replica.Flush() })
		}
		wg.Wait()
	}
	for i, err := range errs {
		if err != nil {
			t.m.FlushFailed(targets[i], err)
		}
	}
}

// handleOutOfRangeError asks the leader for the partition's log end and
// log start, one after the other, and has the machine reset the partition
// with them (Kafka's fetchOffsetAndTruncate).
func (t *Thread) handleOutOfRangeError(r OutOfRange) {
	latest, err := t.listOffset(r, LatestTimestamp)
	var earliest int64
	if err == nil {
		earliest, err = t.listOffset(r, EarliestTimestamp)
	}
	t.m.HandleOffsets(r, latest, earliest, err, t.cfg.Clock.Now())
}

// listOffset asks the leader, as a replica, for one partition's offset at
// timestamp (RemoteLeaderEndPoint.fetchOffset).
func (t *Thread) listOffset(r OutOfRange, timestamp int64) (int64, error) {
	ctx, cancel := t.cfg.Clock.WithTimeout(t.ctx, t.cfg.SocketTimeout)
	defer cancel()
	resp, err := t.cfg.Send(ctx, t.m.SourceBroker(), t.m.ListOffsetsRequest(r, timestamp))
	return ListedOffset(r, resp, err)
}
