package partition

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// simCluster is one partition replicated over three brokers, a controller
// that answers AlterPartition, and a fetcher loop written in the test:
// every step is one random action, and the invariants are checked after it.
type simCluster struct {
	t       *testing.T
	rng     *rand.Rand
	now     time.Time
	reps    map[int32]*Partition
	ids     []int32
	pg      *Purgatory[*Partition]
	pending []Proposal // AlterPartitions the controller has not answered

	// The controller's state of the partition.
	leader                    int32
	leaderEpoch, partEpoch    int32
	isr                       []int32
	lastHWM                   int64 // the leader's high watermark, this epoch
	acked                     []ackedBatch
	produced, ackedN, refused int
	steps                     int
	// producers are idempotent producers retrying across leader changes.
	producers []*simProducer
}

type ackedBatch struct {
	offset int64
	raw    []byte
}

func newSim(t *testing.T, seed uint64) *simCluster {
	c := &simCluster{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), now: t0,
		reps: map[int32]*Partition{}, ids: []int32{1, 2, 3}, pg: NewPurgatory[*Partition](),
		producers: []*simProducer{newSimProducer(1000), newSimProducer(1001)}}
	for _, id := range c.ids {
		c.reps[id] = open(t, t.TempDir(), id, 2)
	}
	c.isr = slices.Clone(c.ids)
	c.elect(1)
	return c
}

// elect makes id the leader in a new epoch, keeping the ISR, as the
// controller does when it picks an ISR member.
func (c *simCluster) elect(id int32) {
	c.leader, c.leaderEpoch, c.partEpoch = id, c.leaderEpoch+1, c.partEpoch+1
	c.pending = nil
	for _, r := range c.ids {
		var err error
		if r == id {
			_, err = c.reps[r].MakeLeader(c.leaderEpoch, c.partEpoch, c.ids, c.isr, c.now)
		} else {
			_, err = c.reps[r].MakeFollower(id, c.leaderEpoch, c.partEpoch, c.ids, c.isr)
		}
		if err != nil {
			c.t.Fatalf("elect %d: %v", id, err)
		}
		c.pg.CheckAndComplete(c.reps[r])
	}
	c.lastHWM = c.reps[id].HighWatermark()
	for _, a := range c.acked {
		if got := batchAt(c.t, c.reps[id], a.offset); !bytes.Equal(got, a.raw) {
			c.t.Fatalf("new leader %d lost the acknowledged batch at %d", id, a.offset)
		}
	}
}

func (c *simCluster) step() {
	lead := c.reps[c.leader]
	switch n := c.rng.IntN(100); {
	case n < 12: // an idempotent producer's turn
		c.producers[c.rng.IntN(len(c.producers))].step(c)
	case n < 25: // a produce
		acks := []int16{-1, -1, 1}[c.rng.IntN(3)]
		info, err := lead.AppendAsLeader(producerBatch(1+c.rng.IntN(4), fmt.Sprint(c.produced), c.now.UnixMilli()), acks, c.now)
		c.produced++
		if err != nil {
			c.refused++
			return
		}
		if acks == -1 {
			raw := batchAt(c.t, lead, info.FirstOffset)
			op := &DelayedProduce{Waits: []ProduceWait{{Partition: lead, RequiredOffset: info.LastOffset + 1}}, Done: func(w []ProduceWait) {
				if w[0].Err == nil {
					c.acked = append(c.acked, ackedBatch{info.FirstOffset, raw})
					c.ackedN++
				}
			}}
			c.pg.TryCompleteElseWatch(op, c.now.Add(30*time.Second), op.Keys()...)
		}
	case n < 70: // a follower fetches, unless it is "slow" this step
		f := c.ids[c.rng.IntN(len(c.ids))]
		if f != c.leader && c.rng.IntN(4) != 0 {
			c.fetch(f)
		}
	case n < 80: // the leader checks its ISR
		if prop, ok := lead.ISRChange(c.now); ok {
			c.pending = append(c.pending, prop)
		}
	case n < 88: // the controller answers
		c.answer()
	case n < 97:
		c.now = c.now.Add(time.Duration(c.rng.IntN(4000)) * time.Millisecond)
		c.pg.Expire(c.now)
	case n < 99:
		return
	default: // a leader change to an ISR member
		others := slices.DeleteFunc(slices.Clone(c.isr), func(id int32) bool { return id == c.leader })
		if len(others) > 0 {
			c.elect(others[c.rng.IntN(len(others))])
		}
	}
}

// fetch is a ReplicaFetcherThread's round for follower id.
func (c *simCluster) fetch(id int32) {
	lead, f := c.reps[c.leader], c.reps[id]
	last := NoEpoch
	if e := f.Epochs(); len(e) > 0 {
		last = e[len(e)-1].Epoch
	}
	params := FetchParams{ReplicaID: id, FetchOffset: f.LogEndOffset(), CurrentLeaderEpoch: c.leaderEpoch, LastFetchedEpoch: last, MaxBytes: 1 + c.rng.IntN(300)}
	res, err := lead.Read(params)
	if err != nil {
		c.t.Fatalf("fetch of %d at %d: %v", id, params.FetchOffset, err)
	}
	if d := res.DivergingEpoch; d != nil {
		to := f.HighWatermark()
		if d.Epoch >= 0 {
			own, err := f.LastOffsetForLeaderEpoch(NoEpoch, d.Epoch, false)
			if err != nil {
				c.t.Fatal(err)
			}
			to = min(own.EndOffset, d.EndOffset)
			if own.Epoch < 0 {
				to = f.HighWatermark()
			}
		}
		if err := f.TruncateTo(to); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	if moved, err := lead.UpdateFollowerFetch(id, -1, params.FetchOffset, c.now); err != nil {
		c.t.Fatal(err)
	} else if moved {
		c.pg.CheckAndComplete(lead)
	}
	if err := f.AppendAsFollower(res.Records); err != nil {
		c.t.Fatalf("follower %d append: %v", id, err)
	}
	f.UpdateHighWatermark(res.HighWatermark)
}

// answer is the controller deciding the oldest AlterPartition: accepted
// when it names the current epochs, refused otherwise.
func (c *simCluster) answer() {
	if len(c.pending) == 0 {
		return
	}
	prop := c.pending[0]
	c.pending = c.pending[1:]
	lead := c.reps[c.leader]
	switch {
	case prop.LeaderEpoch != c.leaderEpoch:
		lead.ISRChangeRefused(kerr.FencedLeaderEpoch.Code)
		return
	case prop.PartitionEpoch != c.partEpoch:
		lead.ISRChangeRefused(kerr.InvalidUpdateVersion.Code)
		return
	}
	c.isr, c.partEpoch = slices.Clone(prop.ISR), c.partEpoch+1
	if moved, err := lead.ApplyPartitionState(c.isr, c.partEpoch, c.now); err != nil {
		c.t.Fatal(err)
	} else if moved {
		c.pg.CheckAndComplete(lead)
	}
}

func (c *simCluster) check() {
	lead := c.reps[c.leader]
	hwm := lead.HighWatermark()
	if hwm < c.lastHWM {
		c.t.Fatalf("leader %d high watermark went back from %d to %d", c.leader, c.lastHWM, hwm)
	}
	c.lastHWM = hwm
	want := committed(c.t, lead, hwm)
	for _, id := range c.isr {
		r := c.reps[id]
		if r.LogEndOffset() < hwm {
			c.t.Fatalf("ISR member %d ends at %d, below the high watermark %d", id, r.LogEndOffset(), hwm)
		}
		if got := committed(c.t, r, hwm); !bytes.Equal(got, want) {
			c.t.Fatalf("ISR member %d's committed prefix [0, %d) differs from leader %d's", id, hwm, c.leader)
		}
	}
	// A new leader's high watermark may lag the old one's until its
	// followers fetch (as in Kafka), so acknowledged batches are checked
	// against the ISR members' logs, not the high watermark.
	c.steps++
	if c.steps%50 != 0 {
		return
	}
	c.checkExactlyOnce()
	for _, a := range c.acked {
		for _, id := range c.isr {
			if got := batchAt(c.t, c.reps[id], a.offset); !bytes.Equal(got, a.raw) {
				c.t.Fatalf("ISR member %d lost the acknowledged batch at %d", id, a.offset)
			}
		}
	}
}

// committed is replica p's log below offset end, raw.
func committed(t testing.TB, p *Partition, end int64) []byte {
	var out []byte
	for at := p.LogStartOffset(); at < end; {
		raw, err := p.log.Read(at, 1<<20)
		if err != nil {
			t.Fatalf("read at %d: %v", at, err)
		}
		raw = below(raw, end)
		if len(raw) == 0 {
			break
		}
		out = append(out, raw...)
		at = nextOffset(t, raw)
	}
	return out
}

func nextOffset(t testing.TB, raw []byte) int64 {
	var next int64
	for pos := 0; pos < len(raw); {
		_, last, _, size, err := storagePeek(raw[pos:])
		if err != nil {
			t.Fatal(err)
		}
		next, pos = last+1, pos+size
	}
	return next
}

// batchAt is the raw batch of p's log that starts at offset.
func batchAt(t testing.TB, p *Partition, offset int64) []byte {
	raw, err := p.log.Read(offset, 1)
	if err != nil {
		t.Fatalf("read batch at %d: %v", offset, err)
	}
	base, _, _, size, err := storagePeek(raw)
	if err != nil || base != offset {
		t.Fatalf("batch at %d starts at %d: %v", offset, base, err)
	}
	return slices.Clone(raw[:size])
}

// Leader and followers exchange fetches, produces, ISR changes and leader
// changes at random; every step keeps the high watermark monotonic within
// a leadership, the committed prefix equal on every ISR member, and every
// acknowledged acks=-1 batch on every leader that follows. Idempotent
// producers resend unacknowledged batches across leader changes; no batch
// of theirs is ever in the leader's log twice.
func TestRandomizedReplication(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5}
	if !testing.Short() {
		seeds = append(seeds, uint64(time.Now().UnixNano()))
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := newSim(t, seed)
			defer func() {
				if t.Failed() {
					t.Logf("seed %d (rerun with this seed in TestRandomizedReplication's list)", seed)
				}
			}()
			for range 1500 {
				c.step()
				c.check()
				if t.Failed() {
					return
				}
			}
			c.checkExactlyOnce()
			var idemAcked, retries, dups int
			for _, p := range c.producers {
				idemAcked, retries, dups = idemAcked+len(p.acked), retries+p.retries, dups+p.dups
			}
			if c.ackedN == 0 || c.refused == 0 || idemAcked == 0 || dups == 0 {
				t.Fatalf("the run exercised too little: %d produced, %d acknowledged, %d refused; idempotent: %d acknowledged, %d duplicates dropped",
					c.produced, c.ackedN, c.refused, idemAcked, dups)
			}
			t.Logf("seed %d: %d produced, %d acknowledged acks=-1, %d refused, final ISR %v epoch %d; idempotent: %d batches acknowledged once, %d resent, %d duplicates dropped",
				seed, c.produced, c.ackedN, c.refused, c.isr, c.leaderEpoch, idemAcked, retries, dups)
		})
	}
}
