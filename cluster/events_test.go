package cluster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEventsSequenceAndSince(t *testing.T) {
	e := NewEvents(8)
	for i := range 5 {
		ev := e.Publish(Event{Kind: EventElection, Node: int32(i)})
		if ev.Seq != uint64(i+1) || ev.Time.IsZero() {
			t.Fatalf("event %d stamped %+v", i, ev)
		}
	}
	got := e.Since(2)
	if len(got) != 3 || got[0].Seq != 3 || got[2].Seq != 5 {
		t.Errorf("Since(2) = %+v", got)
	}
	if e.Last() != 5 || len(e.Since(5)) != 0 {
		t.Errorf("Last %d, Since(5) %v", e.Last(), e.Since(5))
	}
	fixed := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if ev := e.Publish(Event{Kind: EventKill, Time: fixed}); !ev.Time.Equal(fixed) {
		t.Errorf("publish overwrote a given time: %v", ev.Time)
	}
}

func TestEventsRingOverflowReportsMissed(t *testing.T) {
	e := NewEvents(4)
	for range 10 {
		e.Publish(Event{Kind: EventRoleChange})
	}
	got := e.Since(0)
	if len(got) != 5 {
		t.Fatalf("Since(0) = %d events, want a missed marker and 4 events: %+v", len(got), got)
	}
	m := got[0]
	if m.Kind != EventMissed || m.Missed != 6 || m.Seq != 6 {
		t.Errorf("marker %+v, want 6 missed ending at #6", m)
	}
	if got[1].Seq != 7 || got[4].Seq != 10 {
		t.Errorf("kept events %d..%d, want 7..10", got[1].Seq, got[4].Seq)
	}
}

// A subscriber that never reads must not slow or block the publisher; when
// it finally reads it learns exactly how much it missed.
func TestSlowSubscriberNeverBlocksPublish(t *testing.T) {
	e := NewEvents(16)
	slow := e.Subscribe(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10_000 {
			e.Publish(Event{Kind: EventRoleChange})
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	ctx := context.Background()
	ev, err := slow.Next(ctx)
	if err != nil || ev.Kind != EventMissed || ev.Missed != 10_000-16 {
		t.Fatalf("first event for the slow subscriber: %+v, %v", ev, err)
	}
	for want := uint64(10_000 - 15); want <= 10_000; want++ {
		ev, err := slow.Next(ctx)
		if err != nil || ev.Seq != want {
			t.Fatalf("got %+v, %v; want seq %d", ev, err, want)
		}
	}
}

func TestSubscribersSeeEveryEventOrAGap(t *testing.T) {
	e := NewEvents(64)
	const total = 5000
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		sub := e.Subscribe(0)
		wg.Go(func() {
			var seen, last uint64
			for {
				ev, err := sub.Next(context.Background())
				if errors.Is(err, ErrEventsClosed) {
					break
				}
				if err != nil {
					errs <- err
					return
				}
				n := uint64(1)
				if ev.Kind == EventMissed {
					n = ev.Missed
				}
				if ev.Seq != last+n {
					errs <- errors.New("sequence jumped without a missed marker")
					return
				}
				last, seen = ev.Seq, seen+n
			}
			if seen != total {
				errs <- errors.New("events lost without being reported missed")
			}
		})
	}
	for range total {
		e.Publish(Event{Kind: EventElection})
	}
	e.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNextWakesOnPublishCloseAndCancel(t *testing.T) {
	e := NewEvents(8)
	sub := e.SubscribeNew()
	got := make(chan Event, 1)
	go func() {
		ev, _ := sub.Next(context.Background())
		got <- ev
	}()
	e.Publish(Event{Kind: EventKill, Node: 3})
	if ev := <-got; ev.Kind != EventKill || ev.Node != 3 {
		t.Errorf("woken with %+v", ev)
	}

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sub.Next(ctx)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Next = %v", err)
	}

	go func() {
		_, err := sub.Next(context.Background())
		errc <- err
	}()
	e.Close()
	if err := <-errc; !errors.Is(err, ErrEventsClosed) {
		t.Errorf("Next after Close = %v", err)
	}
	if ev := e.Publish(Event{Kind: EventKill}); ev.Seq != 0 || e.Last() != 1 {
		t.Errorf("publish after close stored %+v", ev)
	}
}

// The columns after the sequence number stay put as it grows.
func TestEventStringKeepsItsColumns(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var starts []int
	for _, seq := range []uint64{7, 99, 100, 12345} {
		s := Event{Seq: seq, Time: at, Kind: EventElection, Node: 2, Message: "elected"}.String()
		starts = append(starts, strings.Index(s, string(EventElection)))
	}
	for _, st := range starts {
		if st != starts[0] {
			t.Fatalf("the kind column moves with the sequence number: %v", starts)
		}
	}
}
