package partition

import (
	"fmt"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/storage"
)

// simProducer is an idempotent producer as kgo and the Java client are:
// up to five batches in flight, sent in sequence order, and on any error
// or lost answer every unacknowledged batch is sent again, byte for byte,
// in order. The leaders' producer state must turn those retries into
// exactly one copy of each batch.
type simProducer struct {
	pid      int64
	nextSeq  int32
	made     int
	inflight []*simBatch // unacknowledged, in sequence order
	acked    map[string]int64
	retries  int
	dups     int
}

type simBatch struct {
	tag  string
	raw  []byte
	sent bool // an answer is awaited
	gen  int  // which send an answer belongs to
	done bool
}

func newSimProducer(pid int64) *simProducer {
	return &simProducer{pid: pid, acked: map[string]int64{}}
}

// step makes a new batch or sends the next one waiting to go; now and
// then an answer is lost, so the batch and those after it go again.
func (p *simProducer) step(c *simCluster) {
	if len(p.inflight) < NumBatchesToRetain && c.rng.IntN(2) == 0 {
		n := 1 + c.rng.IntN(3)
		tag := fmt.Sprintf("p%d.%d", p.pid, p.made)
		p.made++
		p.inflight = append(p.inflight, &simBatch{tag: tag, raw: idemBatch(p.pid, 0, p.nextSeq, n, tag)})
		p.nextSeq += int32(n)
	}
	if c.rng.IntN(8) == 0 {
		p.resend(0) // a request timed out: its answer is lost
	}
	for _, b := range p.inflight {
		if !b.sent && !b.done {
			p.send(c, b)
			return
		}
	}
}

// resend marks the batches from i on to be sent again.
func (p *simProducer) resend(i int) {
	for _, b := range p.inflight[i:] {
		if b.sent {
			b.sent = false
			b.gen++
			p.retries++
		}
	}
}

func (p *simProducer) send(c *simCluster, b *simBatch) {
	lead := c.reps[c.leader]
	b.sent = true
	gen := b.gen
	// The log rewrites offsets and the epoch in place; a retry sends the
	// producer's own bytes again.
	raw := append([]byte(nil), b.raw...)
	info, err := lead.AppendAsLeader(raw, -1, c.now)
	if err != nil {
		p.failed(b, gen)
		return
	}
	if info.Duplicate {
		p.dups++
	}
	op := &DelayedProduce{Waits: []ProduceWait{{Partition: lead, RequiredOffset: info.LastOffset + 1}}, Done: func(w []ProduceWait) {
		if w[0].Err != nil {
			p.failed(b, gen)
			return
		}
		if !b.done {
			b.done = true
			p.acked[b.tag] = info.FirstOffset
		}
		for len(p.inflight) > 0 && p.inflight[0].done {
			p.inflight = p.inflight[1:]
		}
	}}
	c.pg.TryCompleteElseWatch(op, c.now.Add(30*time.Second), op.Keys()...)
}

// failed is an error answer: that batch and every later one go again
// (the later ones would be out of order anyway).
func (p *simProducer) failed(b *simBatch, gen int) {
	if b.gen != gen || b.done {
		return // the answer to an earlier send
	}
	for i, x := range p.inflight {
		if x == b {
			p.resend(i)
			return
		}
	}
}

// checkExactlyOnce fails the test when a batch of an idempotent producer
// is in the leader's log twice, or an acknowledged one is not there
// exactly once at the offset it was acknowledged with.
func (c *simCluster) checkExactlyOnce() {
	lead := c.reps[c.leader]
	seen := map[string]int64{}
	raw := committed(c.t, lead, lead.LogEndOffset())
	err := storage.Batches(raw, func(_ int, b *storage.Batch) error {
		recs, err := b.Records()
		if err != nil || len(recs) == 0 {
			return err
		}
		tag, _, _ := strings.Cut(string(recs[0].Value), "-")
		if !strings.HasPrefix(tag, "p") {
			return nil
		}
		if at, ok := seen[tag]; ok {
			return fmt.Errorf("batch %s is in leader %d's log twice, at %d and %d", tag, c.leader, at, b.FirstOffset)
		}
		seen[tag] = b.FirstOffset
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	for _, p := range c.producers {
		for tag, off := range p.acked {
			if at, ok := seen[tag]; !ok || at != off {
				c.t.Fatalf("acknowledged batch %s (offset %d) is at %d in leader %d's log (present: %v)", tag, off, at, c.leader, ok)
			}
		}
	}
}
