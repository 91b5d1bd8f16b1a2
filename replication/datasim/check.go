package datasim

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/kraftlab/kraftlab/replication/partition"
	"github.com/kraftlab/kraftlab/storage"
)

// invariants checks the run after every event. committed is the
// reference log: every batch some replica held below its high watermark,
// by base offset, which every other replica must hold byte for byte.
type invariants struct {
	s         *Sim
	committed map[int64]committedBatch
	// verified is, per broker, the offset up to which its log below its
	// high watermark was compared with committed; hwm the high watermark
	// it last had; inc the incarnation both are for.
	verified map[int32]int64
	hwm      map[int32]int64
	inc      map[int32]int
	// Controller epochs as last seen.
	leaderEpoch, partEpoch int32
	acked                  []ackedBatch
	checkedAcks            int
	crashes, truncations   int
	reads                  int
}

type committedBatch struct {
	next int64
	raw  []byte
}

// ackedBatch is an acks=all batch the leader acknowledged, and the ISR
// at that moment.
type ackedBatch struct {
	base, last  int64
	raw         []byte
	isr         []int32
	leaderEpoch int32
}

func newInvariants(s *Sim) *invariants {
	iv := &invariants{s: s, committed: map[int64]committedBatch{}, verified: map[int32]int64{}, hwm: map[int32]int64{}, inc: map[int32]int{},
		leaderEpoch: -1, partEpoch: -1}
	s.after(50*time.Millisecond, "consumer read", iv.consume)
	return iv
}

func (iv *invariants) check() {
	s := iv.s
	c := s.ctrl
	if c.leaderEpoch < iv.leaderEpoch || c.partEpoch < iv.partEpoch {
		s.fail("controller epochs went back: leader epoch %d -> %d, partition epoch %d -> %d", iv.leaderEpoch, c.leaderEpoch, iv.partEpoch, c.partEpoch)
		return
	}
	iv.leaderEpoch, iv.partEpoch = c.leaderEpoch, c.partEpoch
	for _, id := range brokerIDs {
		b := s.brokers[id]
		if b.p == nil {
			continue
		}
		if iv.inc[id] != b.incarnation {
			iv.inc[id], iv.hwm[id], iv.verified[id] = b.incarnation, -1, 0
		}
		hw := b.p.HighWatermark()
		if hw < iv.hwm[id] {
			s.fail("broker %d high watermark went back from %d to %d (role %v, log end %d)", id, iv.hwm[id], hw, b.p.State().Role, b.p.LogEndOffset())
			return
		}
		iv.hwm[id] = hw
		if hw > c.hwmSeen {
			c.hwmSeen = hw
		}
		if !iv.verify(b, hw) {
			return
		}
	}
	for _, id := range brokerIDs {
		if b := s.brokers[id]; b.p != nil && !iv.leaderBounded(b) {
			return
		}
	}
	for ; iv.checkedAcks < len(iv.acked); iv.checkedAcks++ {
		a := iv.acked[iv.checkedAcks]
		if got, ok := iv.committed[a.base]; !ok || !bytes.Equal(got.raw, a.raw) {
			s.fail("acknowledged batch %d-%d is not the committed batch at %d (committed: %v)", a.base, a.last, a.base, ok)
			return
		}
	}
}

// verify compares b's log from where it was last verified up to hw with
// the committed log, adding what is new to it.
func (iv *invariants) verify(b *broker, hw int64) bool {
	s := iv.s
	at := max(iv.verified[b.id], b.p.LogStartOffset())
	for at < hw {
		raw, err := b.p.ReadLocal(at, 64<<10)
		if err != nil || len(raw) == 0 {
			s.fail("broker %d cannot read its log at %d below its high watermark %d: %v", b.id, at, hw, err)
			return false
		}
		for pos := 0; pos < len(raw) && at < hw; {
			base, last, _, size, err := storage.PeekBatch(raw[pos:])
			if err != nil {
				s.fail("broker %d: batch at %d: %v", b.id, at, err)
				return false
			}
			if base != at {
				s.fail("broker %d: batch at %d starts at %d", b.id, at, base)
				return false
			}
			if last >= hw {
				// The high watermark is inside the batch: it is not
				// committed as a whole yet.
				iv.verified[b.id] = at
				return true
			}
			batch := raw[pos : pos+size]
			if ref, ok := iv.committed[base]; !ok {
				iv.committed[base] = committedBatch{next: last + 1, raw: slices.Clone(batch)}
			} else if ref.next != last+1 || !bytes.Equal(ref.raw, batch) {
				s.fail("broker %d's committed batch at %d (to %d) differs from the one another replica committed (to %d)", b.id, base, last, ref.next-1)
				return false
			}
			at, pos = last+1, pos+size
		}
	}
	iv.verified[b.id] = at
	return true
}

// leaderBounded: a broker that leads has a high watermark no higher than
// the log end of any running member of its ISR.
func (iv *invariants) leaderBounded(b *broker) bool {
	st := b.p.State()
	if st.Role != partition.RoleLeader {
		return true
	}
	for _, id := range st.ISR {
		o := iv.s.brokers[id]
		if o.p == nil {
			continue
		}
		if leo := o.p.LogEndOffset(); leo < st.HighWatermark {
			iv.s.fail("leader %d's high watermark %d is past ISR member %d's log end %d (isr %v)", b.id, st.HighWatermark, id, leo, st.ISR)
			return false
		}
	}
	return true
}

// acknowledged records an acks=all batch the leader b acknowledged.
func (iv *invariants) acknowledged(b *broker, base, last int64, raw []byte) {
	if hw := b.p.HighWatermark(); hw <= last {
		iv.s.fail("broker %d acknowledged %d-%d with its high watermark at %d", b.id, base, last, hw)
		return
	}
	st := b.p.State()
	iv.acked = append(iv.acked, ackedBatch{base: base, last: last, raw: raw, isr: st.ISR, leaderEpoch: st.LeaderEpoch})
}

// becameLeader: a leader elected from the ISR holds every batch
// acknowledged in an earlier leader epoch. (A broker behind on metadata
// may lead an epoch the controller has already moved past; batches
// acknowledged in later epochs need not be on it, and it can acknowledge
// none: its ISR's members fetch from the newer leader.)
func (iv *invariants) becameLeader(b *broker) {
	epoch := b.p.State().LeaderEpoch
	for _, a := range iv.acked {
		if a.leaderEpoch < epoch && !iv.holds(b, a) {
			iv.s.fail("new leader %d lacks the acknowledged batch %d-%d (acknowledged with isr %v; log end %d)", b.id, a.base, a.last, a.isr, b.p.LogEndOffset())
			return
		}
	}
}

// holds reports whether b's log has a at its offset, byte for byte.
func (iv *invariants) holds(b *broker, a ackedBatch) bool {
	if a.last >= b.p.LogEndOffset() || a.base < b.p.LogStartOffset() {
		return false
	}
	raw, err := b.p.ReadLocal(a.base, 1)
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
	var leaders []*broker
	for _, id := range brokerIDs {
		if b := s.brokers[id]; b.p != nil && b.p.State().Role == partition.RoleLeader {
			leaders = append(leaders, b)
		}
	}
	if len(leaders) == 0 {
		return
	}
	b := leaders[s.rng.IntN(len(leaders))]
	hw := b.p.HighWatermark()
	from := b.p.LogStartOffset() + s.rng.Int64N(hw-b.p.LogStartOffset()+1)
	res, err := b.p.Read(partition.FetchParams{ReplicaID: -1, ReplicaEpoch: -1, FetchOffset: from, CurrentLeaderEpoch: -1,
		LastFetchedEpoch: -1, MaxBytes: 4 << 10, Isolation: partition.IsolationHighWatermark})
	if err != nil {
		s.record("consumer read at broker %d offset %d: %v", b.id, from, err)
		return
	}
	iv.reads++
	for pos := 0; pos < len(res.Records); {
		base, last, _, size, err := storage.PeekBatch(res.Records[pos:])
		if err != nil {
			s.fail("consumer read at broker %d offset %d: %v", b.id, from, err)
			return
		}
		if last >= res.HighWatermark {
			s.fail("consumer read at broker %d saw offset %d past the high watermark %d", b.id, last, res.HighWatermark)
			return
		}
		if ref, ok := iv.committed[base]; !ok || !bytes.Equal(ref.raw, res.Records[pos:pos+size]) {
			s.fail("consumer read at broker %d got batch %d-%d that is not the committed one (known: %v)", b.id, base, last, ok)
			return
		}
		pos += size
	}
}

// final checks the end of the quiet spell: every broker is up, in the
// ISR, and holds every acknowledged batch.
func (iv *invariants) final() {
	s := iv.s
	c := s.ctrl
	if c.leader < 0 || len(c.isr) != len(brokerIDs) {
		s.fail("after the quiet spell the controller has leader %d and isr %v, want every broker in sync; %s", c.leader, c.isr, iv.describe())
		return
	}
	for _, id := range brokerIDs {
		b := s.brokers[id]
		for _, a := range iv.acked {
			if !iv.holds(b, a) {
				s.fail("after the quiet spell broker %d lacks the acknowledged batch %d-%d (log end %d)", id, a.base, a.last, b.p.LogEndOffset())
				return
			}
		}
	}
}

// describe is each broker's state as the controller and the broker see it.
func (iv *invariants) describe() string {
	s, c := iv.s, iv.s.ctrl
	var out []byte
	for _, id := range brokerIDs {
		b := s.brokers[id]
		out = fmt.Appendf(out, "broker %d: epoch %d (controller: %d, fenced %v, last heartbeat %v ago)", id, b.epoch, c.brokerEpoch[id], c.fenced[id], s.now.Sub(c.lastHeartbeat[id]))
		if b.p != nil {
			st := b.p.State()
			out = fmt.Appendf(out, ", %v of %d epoch %d, log end %d, hwm %d", st.Role, st.LeaderID, st.LeaderEpoch, st.LogEndOffset, st.HighWatermark)
			if b.follow != nil {
				out = fmt.Appendf(out, ", fetcher %+v failed %v", b.follow.m.Stats(s.now).Partitions, b.follow.m.Failed())
			}
		}
		out = append(out, "; "...)
	}
	return string(out)
}
