package wire

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// bigBytes is more than a loopback socket's send and receive buffers hold
// together, so a write of it cannot complete while the peer does not read.
const bigBytes = 16 << 20

// A handler answering a client that stopped reading returns at once, and
// the client still gets every answer, whole and in order, once it reads.
func TestRespondDoesNotWaitForAPeerThatStopsReading(t *testing.T) {
	var responded atomic.Int32
	payload := bytes.Repeat([]byte{0xab}, bigBytes)
	s, _ := startServer(t, serverOpts{handler: HandlerFunc(func(req *Request) {
		b := req.Body.(*kmsg.FetchRequest)
		resp := fetchEcho(b)
		resp.Topics[0].Partitions[0].RecordBatches = payload
		req.Respond(resp)
		responded.Add(1)
	})})
	raw := dialRaw(t, s.Addr())
	var corrs []int32
	for offset := range int64(3) {
		corrs = append(corrs, raw.send(t, fetchAt(offset)))
	}
	eventually(t, "every Fetch answered while the client reads nothing", func() bool { return responded.Load() == 3 })
	for i, corr := range corrs {
		resp := raw.recv(t, fetchAt(0), 12, corr).(*kmsg.FetchResponse)
		p := resp.Topics[0].Partitions[0]
		if p.HighWatermark != int64(i) || !bytes.Equal(p.RecordBatches, payload) {
			t.Fatalf("answer %d: high watermark %d, %d bytes of records", i, p.HighWatermark, len(p.RecordBatches))
		}
	}
}

// fetchRequest is a v12 Fetch of one partition at offset.
func fetchAt(offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = 2
	t := kmsg.NewFetchRequestTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset = offset
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// Send returns although the server stopped reading, and every request
// still goes out, whole and in order, once it reads again.
func TestSendDoesNotWaitForAServerThatStopsReading(t *testing.T) {
	gate := make(chan struct{})
	var gateOnce sync.Once
	open := func() { gateOnce.Do(func() { close(gate) }) }
	defer open()
	var served sync.Mutex
	var seqs []int32
	apis := append(slices.Clone(quorumAPIs), APIRange{Key: produceKey, MinVersion: 3, MaxVersion: 11})
	s, _ := startServer(t, serverOpts{apis: apis, maxFrame: 2 * bigBytes, pool: -1, handler: HandlerFunc(func(req *Request) {
		b, ok := req.Body.(*kmsg.ProduceRequest)
		if !ok {
			echo(req)
			return
		}
		// The reader runs the handler: while it waits nothing more is
		// read from the connection.
		<-gate
		served.Lock()
		seqs = append(seqs, b.TimeoutMillis)
		served.Unlock()
		resp := kmsg.NewPtrProduceResponse()
		resp.ThrottleMillis = b.TimeoutMillis
		req.Respond(resp)
	})})
	c := newClient(t, ClientConfig{Addr: s.Addr(), From: 1, To: 2})
	do(t, c, voteRequest(1, true)) // dialed before the server stalls

	var (
		sent    atomic.Bool
		mu      sync.Mutex
		answers []int32
		errs    []error
	)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	records := bytes.Repeat([]byte{'r'}, bigBytes)
	go func() {
		for seq := range int32(3) {
			// A Produce of 16 MiB of records, its sequence number in
			// the timeout.
			req := kmsg.NewPtrProduceRequest()
			req.Version, req.Acks, req.TimeoutMillis = 9, -1, seq
			pt := kmsg.NewProduceRequestTopic()
			pt.Topic = "t"
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Records = records
			pt.Partitions = append(pt.Partitions, pp)
			req.Topics = append(req.Topics, pt)
			err := c.Send(ctx, req, func(resp kmsg.Response, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				answers = append(answers, resp.(*kmsg.ProduceResponse).ThrottleMillis)
			})
			if err != nil {
				t.Errorf("Send: %v", err)
			}
		}
		sent.Store(true)
	}()
	eventually(t, "three 16 MiB requests sent while the server reads nothing", sent.Load)
	open()
	eventually(t, "every request answered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(answers)+len(errs) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 || answers[0] != 0 || answers[1] != 1 || answers[2] != 2 {
		t.Fatalf("answers %v, errors %v: want 0, 1, 2 in order", answers, errs)
	}
	served.Lock()
	defer served.Unlock()
	if len(seqs) != 3 || seqs[0] != 0 || seqs[1] != 1 || seqs[2] != 2 {
		t.Fatalf("server read %v, want 0, 1, 2", seqs)
	}
}
