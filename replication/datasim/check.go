package datasim

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/storage"
)

// invariants checks the run after every event. Per partition, committed
// is the reference log: every batch some replica held below its high
// watermark, by base offset, which every other replica must hold byte for
// byte.
type invariants struct {
	s     *Sim
	parts []*partInvariants
	// verified is, per replica, the offset up to which its log below its
	// high watermark was compared with committed; hwm the high watermark
	// it last had and led its leader epoch led with (-1 as a follower);
	// inc the incarnation they are for.
	verified map[replicaKey]int64
	hwm      map[replicaKey]int64
	led      map[replicaKey]int32
	inc      map[replicaKey]int

	crashes, truncations int
	// tornTails counts the crashes that left part of a write behind.
	tornTails int
	reads     int
	hwmSeen   []int64
}

type replicaKey struct{ broker, idx int32 }

type partInvariants struct {
	committed map[int64]committedBatch
	// Controller epochs as last seen.
	leaderEpoch, partEpoch int32
	acked                  []ackedBatch
	checkedAcks            int
}

type committedBatch struct {
	next int64
	raw  []byte
}

// ackedBatch is an acks=all batch the leader acknowledged, with the ISR
// and leader epoch at that moment.
type ackedBatch struct {
	base, last  int64
	raw         []byte
	isr         []int32
	leaderEpoch int32
}

func newInvariants(s *Sim) *invariants {
	iv := &invariants{s: s, verified: map[replicaKey]int64{}, hwm: map[replicaKey]int64{}, led: map[replicaKey]int32{}, inc: map[replicaKey]int{},
		hwmSeen: make([]int64, s.cfg.Partitions)}
	for range s.cfg.Partitions {
		iv.parts = append(iv.parts, &partInvariants{committed: map[int64]committedBatch{}, leaderEpoch: -1, partEpoch: -1})
	}
	s.after(50*time.Millisecond, "consumer read", iv.consume)
	return iv
}

func (iv *invariants) check() {
	s := iv.s
	for idx, pi := range iv.parts {
		r := s.ctrl.Partition(int32(idx))
		if r.LeaderEpoch < pi.leaderEpoch || r.PartitionEpoch < pi.partEpoch {
			s.fail("p%d: controller epochs went back: leader epoch %d -> %d, partition epoch %d -> %d", idx, pi.leaderEpoch, r.LeaderEpoch, pi.partEpoch, r.PartitionEpoch)
			return
		}
		pi.leaderEpoch, pi.partEpoch = r.LeaderEpoch, r.PartitionEpoch
	}
	for _, id := range s.cfg.Brokers {
		b := s.brokers[id]
		if !b.up {
			continue
		}
		for _, h := range b.hosts {
			if !iv.checkReplica(b, h) {
				return
			}
		}
	}
	for _, id := range s.cfg.Brokers {
		if b := s.brokers[id]; b.up {
			for _, h := range b.hosts {
				if !iv.leaderBounded(b, h) {
					return
				}
			}
		}
	}
	for idx, pi := range iv.parts {
		for ; pi.checkedAcks < len(pi.acked); pi.checkedAcks++ {
			a := pi.acked[pi.checkedAcks]
			if got, ok := pi.committed[a.base]; !ok || !bytes.Equal(got.raw, a.raw) {
				s.fail("p%d: acknowledged batch %d-%d is not the committed batch at %d (committed: %v)", idx, a.base, a.last, a.base, ok)
				return
			}
		}
	}
}

// checkReplica: a leader's high watermark did not go back within its
// leader epoch, the replica kept every record it once held below a high
// watermark, and its log below the high watermark is the committed log.
// A follower's high watermark may go back: it takes what its leader sends,
// and a new leader's lags the old one's until its followers fetch from it
// (Kafka's updateHighWatermark), but what it held as committed stays.
func (iv *invariants) checkReplica(b *broker, h *host) bool {
	k := replicaKey{b.id, h.idx}
	if iv.inc[k] != b.incarnation {
		iv.inc[k], iv.hwm[k], iv.led[k], iv.verified[k] = b.incarnation, -1, -1, 0
	}
	hw, st := h.p.HighWatermark(), h.p.State()
	led := int32(-1)
	if st.Role == partition.RoleLeader {
		led = st.LeaderEpoch
	}
	if led >= 0 && led == iv.led[k] && hw < iv.hwm[k] {
		iv.s.fail("broker %d p%d leader's high watermark went back from %d to %d in leader epoch %d (log end %d)", b.id, h.idx, iv.hwm[k], hw, led, h.p.LogEndOffset())
		return false
	}
	if leo := h.p.LogEndOffset(); leo < iv.verified[k] {
		iv.s.fail("broker %d p%d log ends at %d, below the committed offset %d it held (role %v)", b.id, h.idx, leo, iv.verified[k], st.Role)
		return false
	}
	iv.hwm[k], iv.led[k] = hw, led
	iv.hwmSeen[h.idx] = max(iv.hwmSeen[h.idx], hw)
	return iv.verify(b, h, hw)
}

// verify compares the replica's log from where it was last verified up to
// hw with the committed log, adding what is new to it.
func (iv *invariants) verify(b *broker, h *host, hw int64) bool {
	s, k, pi := iv.s, replicaKey{b.id, h.idx}, iv.parts[h.idx]
	at := max(iv.verified[k], h.p.LogStartOffset())
	for at < hw {
		raw, err := h.p.ReadLocal(at, 64<<10)
		if err != nil || len(raw) == 0 {
			s.fail("broker %d p%d cannot read its log at %d below its high watermark %d: %v", b.id, h.idx, at, hw, err)
			return false
		}
		for pos := 0; pos < len(raw) && at < hw; {
			base, last, _, size, err := storage.PeekBatch(raw[pos:])
			if err != nil {
				s.fail("broker %d p%d: batch at %d: %v", b.id, h.idx, at, err)
				return false
			}
			if base != at {
				s.fail("broker %d p%d: batch at %d starts at %d", b.id, h.idx, at, base)
				return false
			}
			if last >= hw {
				// The high watermark is inside the batch: it is not
				// committed as a whole yet.
				iv.verified[k] = at
				return true
			}
			batch := raw[pos : pos+size]
			if ref, ok := pi.committed[base]; !ok {
				pi.committed[base] = committedBatch{next: last + 1, raw: slices.Clone(batch)}
			} else if ref.next != last+1 || !bytes.Equal(ref.raw, batch) {
				s.fail("broker %d p%d's committed batch at %d (to %d) differs from the one another replica committed (to %d)", b.id, h.idx, base, last, ref.next-1)
				return false
			}
			at, pos = last+1, pos+size
		}
	}
	iv.verified[k] = at
	return true
}

// leaderBounded: a replica that leads has a high watermark no higher than
// the log end of any running member of its ISR.
func (iv *invariants) leaderBounded(b *broker, h *host) bool {
	st := h.p.State()
	if st.Role != partition.RoleLeader {
		return true
	}
	for _, id := range st.ISR {
		o := iv.s.brokers[id]
		if !o.up {
			continue
		}
		if leo := o.hosts[h.idx].p.LogEndOffset(); leo < st.HighWatermark {
			iv.s.fail("p%d leader %d's high watermark %d is past ISR member %d's log end %d (isr %v)", h.idx, b.id, st.HighWatermark, id, leo, st.ISR)
			return false
		}
	}
	return true
}

// ackedCount is how many batches were acknowledged in all.
func (iv *invariants) ackedCount() int {
	n := 0
	for _, pi := range iv.parts {
		n += len(pi.acked)
	}
	return n
}

// acknowledged records an acks=all batch the leader b acknowledged.
func (iv *invariants) acknowledged(b *broker, h *host, base, last int64, raw []byte) {
	st := h.p.State()
	if st.HighWatermark <= last {
		iv.s.fail("broker %d p%d acknowledged %d-%d with its high watermark at %d", b.id, h.idx, base, last, st.HighWatermark)
		return
	}
	pi := iv.parts[h.idx]
	pi.acked = append(pi.acked, ackedBatch{base: base, last: last, raw: raw, isr: st.ISR, leaderEpoch: st.LeaderEpoch})
}

// becameLeader: a leader elected from the ISR holds every batch
// acknowledged in an earlier leader epoch. (A broker behind on metadata
// may lead an epoch the controller has already moved past; batches
// acknowledged in later epochs need not be on it, and it can acknowledge
// none: its ISR's members fetch from the newer leader.)
func (iv *invariants) becameLeader(b *broker, h *host) {
	epoch := h.p.State().LeaderEpoch
	for _, a := range iv.parts[h.idx].acked {
		if a.leaderEpoch < epoch && !holds(h.p, a) {
			iv.s.fail("new p%d leader %d lacks the acknowledged batch %d-%d (acknowledged in epoch %d with isr %v; log end %d)",
				h.idx, b.id, a.base, a.last, a.leaderEpoch, a.isr, h.p.LogEndOffset())
			return
		}
	}
}

// holds reports whether p's log has a at its offset, byte for byte.
func holds(p *partition.Partition, a ackedBatch) bool {
	if a.last >= p.LogEndOffset() || a.base < p.LogStartOffset() {
		return false
	}
	raw, err := p.ReadLocal(a.base, 1)
	if err != nil {
		return false
	}
	_, _, _, size, err := storage.PeekBatch(raw)
	return err == nil && bytes.Equal(raw[:size], a.raw)
}

// consume reads at a leader as a consumer does (high watermark
// isolation): nothing past the high watermark, nothing but committed
// batches.
func (iv *invariants) consume() {
	s := iv.s
	s.after(s.jitter(20*time.Millisecond, 120*time.Millisecond), "consumer read", iv.consume)
	idx := s.pickPartition()
	var leaders []*broker
	for _, id := range s.cfg.Brokers {
		if b := s.brokers[id]; b.up && b.hosts[idx].p.State().Role == partition.RoleLeader {
			leaders = append(leaders, b)
		}
	}
	if len(leaders) == 0 {
		return
	}
	b := leaders[s.rng.IntN(len(leaders))]
	p := b.hosts[idx].p
	hw := p.HighWatermark()
	from := p.LogStartOffset() + s.rng.Int64N(hw-p.LogStartOffset()+1)
	res, err := p.Read(partition.FetchParams{ReplicaID: -1, ReplicaEpoch: -1, FetchOffset: from, CurrentLeaderEpoch: -1,
		LastFetchedEpoch: -1, MaxBytes: 4 << 10, Isolation: partition.IsolationHighWatermark})
	if err != nil {
		s.record("consumer read at broker %d p%d offset %d: %v", b.id, idx, from, err)
		return
	}
	iv.reads++
	for pos := 0; pos < len(res.Records); {
		base, last, _, size, err := storage.PeekBatch(res.Records[pos:])
		if err != nil {
			s.fail("consumer read at broker %d p%d offset %d: %v", b.id, idx, from, err)
			return
		}
		if last >= res.HighWatermark {
			s.fail("consumer read at broker %d p%d saw offset %d past the high watermark %d", b.id, idx, last, res.HighWatermark)
			return
		}
		if ref, ok := iv.parts[idx].committed[base]; !ok || !bytes.Equal(ref.raw, res.Records[pos:pos+size]) {
			s.fail("consumer read at broker %d p%d got batch %d-%d that is not the committed one (known: %v)", b.id, idx, base, last, ok)
			return
		}
		pos += size
	}
}

// final checks the end of the quiet spell: every broker is up, in every
// ISR, and holds every acknowledged batch.
func (iv *invariants) final() {
	s := iv.s
	for idx := range s.cfg.Partitions {
		r := s.ctrl.Partition(idx)
		if r.Leader < 0 || len(r.ISR) != len(s.cfg.Brokers) {
			s.fail("after the quiet spell p%d has leader %d and isr %v, want every broker in sync; %s", idx, r.Leader, r.ISR, iv.describe())
			return
		}
		for _, id := range s.cfg.Brokers {
			p := s.brokers[id].hosts[idx].p
			for _, a := range iv.parts[idx].acked {
				if !holds(p, a) {
					s.fail("after the quiet spell broker %d lacks the acknowledged p%d batch %d-%d (log end %d)", id, idx, a.base, a.last, p.LogEndOffset())
					return
				}
			}
		}
	}
}

// describe is each broker's state as the controller and the broker see it.
func (iv *invariants) describe() string {
	s := iv.s
	var out []byte
	for _, id := range s.cfg.Brokers {
		b := s.brokers[id]
		out = fmt.Appendf(out, "broker %d: epoch %d", id, b.epoch)
		if c := s.model; c != nil {
			out = fmt.Appendf(out, " (controller: %d, fenced %v, last heartbeat %v ago)", c.brokerEpoch[id], c.fenced[id], s.now().Sub(c.lastHeartbeat[id]))
		}
		if b.up {
			for _, h := range b.hosts {
				st := h.p.State()
				out = fmt.Appendf(out, ", p%d %v of %d epoch %d, log end %d, hwm %d", h.idx, st.Role, st.LeaderID, st.LeaderEpoch, st.LogEndOffset, st.HighWatermark)
			}
			for _, leader := range s.cfg.Brokers {
				if l := b.loops[leader]; l != nil {
					out = fmt.Appendf(out, ", fetcher from %d %+v failed %v", leader, l.m.Stats(s.now()).Partitions, l.m.Failed())
				}
			}
		}
		out = append(out, "; "...)
	}
	return string(out)
}
