package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeAllocator is an active controller answering AllocateProducerIds
// from a script: each request takes the next answer.
type fakeAllocator struct {
	mu       sync.Mutex
	requests []*kmsg.AllocateProducerIDsRequest
	next     int64
	refuse   int // this many requests are refused first
	inFlight int
	overlap  bool
}

func (f *fakeAllocator) send(_ context.Context, _ int32, req kmsg.Request) (kmsg.Response, error) {
	f.mu.Lock()
	f.inFlight++
	f.overlap = f.overlap || f.inFlight > 1
	f.requests = append(f.requests, req.(*kmsg.AllocateProducerIDsRequest))
	resp := kmsg.NewPtrAllocateProducerIDsResponse()
	if f.refuse > 0 {
		f.refuse--
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
	} else {
		resp.ProducerIDStart, resp.ProducerIDLen = f.next, 1000
		f.next += 1000
	}
	f.inFlight--
	f.mu.Unlock()
	return resp, nil
}

func (f *fakeAllocator) sent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func testProducerIDManager(t *testing.T, f *fakeAllocator) *producerIDManager {
	m := newProducerIDManager(producerIDManagerConfig{
		brokerID: 101, brokerEpoch: func() int64 { return 7 }, controller: func() int32 { return 1 },
		send: f.send, timeout: time.Second, log: slog.New(slog.DiscardHandler),
	})
	t.Cleanup(m.close)
	return m
}

// generateWhenReady asks until the manager has a block.
func generateWhenReady(t *testing.T, m *producerIDManager) int64 {
	t.Helper()
	var id int64
	poll.Until(t, 10*time.Second, "a producer id", func() bool {
		var err error
		id, err = m.generateProducerID()
		if err != nil && !errors.Is(err, kerr.CoordinatorLoadInProgress) {
			t.Fatal(err)
		}
		return err == nil
	})
	return id
}

// TestProducerIDManagerPrefetchesTheNextBlock: the first call finds no
// block (COORDINATOR_LOAD_IN_PROGRESS) and asks for one; ids then come in
// order, the next block is asked for at 90% of the first, and id 1000
// follows 999 without a refusal in between.
func TestProducerIDManagerPrefetchesTheNextBlock(t *testing.T) {
	f := &fakeAllocator{}
	m := testProducerIDManager(t, f)
	if _, err := m.generateProducerID(); !errors.Is(err, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("first call: %v, want COORDINATOR_LOAD_IN_PROGRESS", err)
	}
	if id := generateWhenReady(t, m); id != 0 {
		t.Fatalf("first id %d, want 0", id)
	}
	for want := int64(1); want < 900; want++ {
		if id, err := m.generateProducerID(); err != nil || id != want {
			t.Fatalf("id %d, %v; want %d", id, err, want)
		}
	}
	if n := f.sent(); n != 1 {
		t.Fatalf("%d requests before 90%% of the block, want 1", n)
	}
	if id, _ := m.generateProducerID(); id != 900 {
		t.Fatalf("id %d, want 900", id)
	}
	poll.Until(t, 10*time.Second, "the next block to arrive", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.nextBlock != nil
	})
	for want := int64(901); want < 1100; want++ {
		if id, err := m.generateProducerID(); err != nil || id != want {
			t.Fatalf("id %d, %v; want %d", id, err, want)
		}
	}
	if n := f.sent(); n != 2 {
		t.Fatalf("%d requests for 1100 ids, want 2", n)
	}
	for _, r := range f.requests {
		if r.BrokerID != 101 || r.BrokerEpoch != 7 {
			t.Fatalf("request %+v, want broker 101 epoch 7", r)
		}
	}
}

// TestProducerIDManagerRetriesARefusal: a refused request is asked
// again by a later call once the backoff passed, and never two at once.
func TestProducerIDManagerRetriesARefusal(t *testing.T) {
	f := &fakeAllocator{refuse: 2}
	m := testProducerIDManager(t, f)
	if id := generateWhenReady(t, m); id != 0 {
		t.Fatalf("first id %d, want 0", id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.requests); n != 3 || f.overlap {
		t.Fatalf("%d requests (overlapping: %v), want 3 one at a time", n, f.overlap)
	}
}

// TestProducerIDManagerRefusesABlockGoingBack: a block that does not
// follow the current one is not used.
func TestProducerIDManagerRefusesABlockGoingBack(t *testing.T) {
	m := testProducerIDManager(t, &fakeAllocator{})
	m.current = producerIDBlock{first: 5000, size: 1000, next: 6000}
	resp := kmsg.NewPtrAllocateProducerIDsResponse()
	resp.ProducerIDStart, resp.ProducerIDLen = 5500, 1000
	m.inFlight = true
	m.handleResponse(resp, nil)
	if m.nextBlock != nil || m.inFlight {
		t.Fatalf("block from 5500 after 5000-5999 taken: %+v", m.nextBlock)
	}
}

// TestInitProducerIDAnswers: an idempotent producer gets a fresh id at
// epoch 0, even when it names its old one; what a transactional producer
// or a malformed request asks gets Kafka's errors.
func TestInitProducerIDAnswers(t *testing.T) {
	m := testProducerIDManager(t, &fakeAllocator{next: 3000})
	generateWhenReady(t, m) // 3000
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name       string
		txn        *string
		id         int64
		epoch      int16
		wantCode   int16
		wantID     int64
		wantEpochs int16
	}{
		{"idempotent", nil, -1, -1, 0, 3001, 0},
		{"idempotent with its old id", nil, 3001, 4, 0, 3002, 0},
		{"id without epoch", nil, 3001, -1, kerr.InvalidRequest.Code, -1, -1},
		{"epoch without id", nil, -1, 2, kerr.InvalidRequest.Code, -1, -1},
		{"empty transactional id", str(""), -1, -1, kerr.InvalidRequest.Code, -1, -1},
		{"transactional", str("tx"), -1, -1, kerr.NotCoordinator.Code, -1, -1},
	} {
		r := kmsg.NewPtrInitProducerIDRequest()
		r.Version, r.TransactionalID, r.ProducerID, r.ProducerEpoch = 5, tc.txn, tc.id, tc.epoch
		resp := m.initProducerID(r)
		if resp.ErrorCode != tc.wantCode || resp.ProducerID != tc.wantID || resp.ProducerEpoch != tc.wantEpochs {
			t.Errorf("%s: %+v, want error %d id %d epoch %d", tc.name, resp, tc.wantCode, tc.wantID, tc.wantEpochs)
		}
	}
}
