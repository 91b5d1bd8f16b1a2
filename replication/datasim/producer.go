package datasim

import (
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/storage"
)

// producer is an acks=all workload: every few milliseconds a batch of one
// to four records goes to the broker the controller names leader (a
// client's metadata, so a deposed leader may get it). The leader appends
// it and answers once the high watermark passes it; that moment, not the
// answer's arrival, is when the record counts as acknowledged.
type producer struct {
	s                     *Sim
	sent, refused, failed int
}

func newProducer(s *Sim) *producer {
	p := &producer{s: s}
	s.after(10*time.Millisecond, "produce", p.tick)
	return p
}

func (p *producer) tick() {
	s := p.s
	if !s.quiet {
		s.after(s.jitter(2*time.Millisecond, 25*time.Millisecond), "produce", p.tick)
	}
	idx := s.pickPartition()
	leader := s.ctrl.Partition(idx).Leader
	if leader < 0 {
		return
	}
	n := 1 + s.rng.IntN(4)
	recs := make([]storage.Record, n)
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, "b%d-r%d", p.sent, i)
	}
	raw := storage.AppendBatch(nil, storage.BatchSpec{LeaderEpoch: -1, Timestamp: s.now().UnixMilli()}, recs)
	p.sent++
	tag := p.sent
	s.send(s.cfg.Producer, leader, "produce", func() {
		b := s.brokers[leader]
		b.handleProduce(b.hosts[idx], tag, raw)
	})
}

// handleProduce is the leader's side of an acks=all produce: append, then
// wait in purgatory for the high watermark (or the timeout).
func (b *broker) handleProduce(h *host, tag int, raw []byte) {
	p := h.p
	info, err := p.AppendAsLeader(slices.Clone(raw), -1, b.s.now())
	if err != nil {
		b.s.prod.refused++
		return
	}
	stored, err := p.ReadLocal(info.FirstOffset, 1)
	if err != nil {
		b.s.fail("broker %d cannot read back produce %d at %d: %v", b.id, tag, info.FirstOffset, err)
		return
	}
	_, _, _, size, err := storage.PeekBatch(stored)
	if err != nil {
		b.s.fail("broker %d: produce %d at %d: %v", b.id, tag, info.FirstOffset, err)
		return
	}
	stored = slices.Clone(stored[:size])
	b.requestFlush(h)
	b.fetches.CheckAndComplete(p)
	op := &partition.DelayedProduce{
		Waits: []partition.ProduceWait{{Partition: p, RequiredOffset: info.LastOffset + 1}},
		Done: func(w []partition.ProduceWait) {
			if w[0].Err != nil {
				b.s.prod.failed++
				return
			}
			b.s.inv.acknowledged(b, h, info.FirstOffset, info.LastOffset, stored)
		},
	}
	deadline := b.s.now().Add(produceTimeout)
	if !b.produces.TryCompleteElseWatch(op, deadline, op.Keys()...) {
		b.expireAt(deadline)
	}
}
