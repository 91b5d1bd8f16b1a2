package benchkit

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/pushrpc"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A single writer's commit, split into legs. Every quorum message is
// stamped at both ends of its connection (wire.Stamp: when the client
// framed the request, when the server read it, when the server framed the
// answer, when the client read it), and the writer notes when each
// proposal began and returned. For each commit the exchange that carried
// the record to a follower and the one that brought its acknowledgement
// back are found by their stamps; of the two followers (observers do not
// count toward commit), the one whose
// acknowledgement reached the leader first is the one that committed.
//
// Pull: the record leaves in the answer to a Fetch (X), the follower's
// next Fetch (Y) acknowledges it. Push: the record leaves in an
// AppendEntries (X), whose answer acknowledges it.

// Legs is the median of each leg of a single writer's commits, in order;
// the legs of one commit add up to its latency.
type Legs struct {
	// WaitFetch: pull only, the record waited for a follower's Fetch to
	// arrive (none was parked at the leader when it was proposed).
	WaitFetch time.Duration `json:"waitFetchNs"`
	// LeaderSend: from the proposal (or the Fetch's arrival) to the
	// leader framing the message that carries the record.
	LeaderSend time.Duration `json:"leaderSendNs"`
	// ToFollower: that message on its way, until the follower read it.
	ToFollower time.Duration `json:"toFollowerNs"`
	// Follower: the follower appending the record, until it framed its
	// acknowledgement (pull: its next Fetch; push: its answer).
	Follower time.Duration `json:"followerNs"`
	// ToLeader: the acknowledgement on its way, until the leader read it.
	ToLeader time.Duration `json:"toLeaderNs"`
	// LeaderCommit: from the acknowledgement to the writer's return: the
	// leader moving its high watermark and completing the proposal.
	LeaderCommit time.Duration `json:"leaderCommitNs"`
	// Split counts the commits split, of Commits in the window.
	Split   int `json:"split"`
	Commits int `json:"commits"`
}

// span is one proposal, from its start to its return.
type span struct{ begin, end time.Time }

// legRecorder keeps the window's stamps of the replication key's
// messages, and its proposals. A stamp takes a slot of a buffer made
// before the window with one atomic add, so that stamping, which every
// connection goroutine does, serializes nothing and allocates nothing.
type legRecorder struct {
	mode  raft.Replication
	key   int16 // the key of the messages that carry records: Fetch or AppendEntries
	slots []wire.Stamp
	used  atomic.Int64

	mu sync.Mutex
	// from is when stamping began: a proposal begun earlier has no
	// stamps for its first legs.
	from  time.Time
	spans []span
}

// maxStamps bounds what one window keeps: a single writer commits some
// thousands of records a second, each taking four stamps an exchange
// with every replica; stamps past it are lost, and the commits they
// belonged to are not split.
const maxStamps = 1 << 19

// minLegRecordBytes is the smallest record whose message the legs can
// tell from an empty one (news of the high watermark, a heartbeat): an
// empty Fetch answer or AppendEntries is about 100 bytes.
const minLegRecordBytes = 128

func newLegRecorder(mode raft.Replication) *legRecorder {
	key := kmsg.Fetch.Int16()
	if mode == raft.Push {
		key = pushrpc.AppendEntriesKey
	}
	return &legRecorder{mode: mode, key: key, slots: make([]wire.Stamp, maxStamps)}
}

func (r *legRecorder) stamp(s wire.Stamp) {
	if s.Key != r.key {
		return
	}
	if i := r.used.Add(1) - 1; i < int64(len(r.slots)) {
		r.slots[i] = s
	}
}

// stamps are the stamps kept; read once stamping has stopped.
func (r *legRecorder) stamps() []wire.Stamp {
	return r.slots[:min(r.used.Load(), int64(len(r.slots)))]
}

// start marks when stamping began.
func (r *legRecorder) start(at time.Time) {
	r.mu.Lock()
	r.from = at
	r.mu.Unlock()
}

func (r *legRecorder) proposal(begin, end time.Time) {
	r.mu.Lock()
	if !r.from.IsZero() && !begin.Before(r.from) {
		r.spans = append(r.spans, span{begin, end})
	}
	r.mu.Unlock()
}

// stamper is a System whose messages can be stamped.
type stamper interface {
	SetStamper(wire.Stamper)
	// Replication says which messages carry records.
	Replication() raft.Replication
}

// exchange is one request and its answer on one connection.
type exchange struct {
	client, server int32
	at             [5]time.Time // by wire.StampKind
	// reqBytes and respBytes size the request and the answer: one that
	// carries the record is at least the record's size.
	reqBytes, respBytes int
}

func (x *exchange) has(k wire.StampKind) bool { return !x.at[k].IsZero() }

// whole reports whether every stamp of the exchange is known.
func (x *exchange) whole() bool {
	return x.has(wire.ClientSent) && x.has(wire.ServerRead) && x.has(wire.ServerSent) && x.has(wire.ClientRead)
}

// split finds the legs of every proposal of a record of recordBytes,
// leader leading its followers; observers never count toward commit, so
// their acknowledgements are passed over. Call it once stamping has
// stopped and the writers are done.
func (r *legRecorder) split(leader int32, followers []int32, recordBytes int) Legs {
	type xkey struct {
		conn uint32
		corr int32
	}
	byKey := map[xkey]*exchange{}
	for _, s := range r.stamps() {
		k := xkey{s.Conn, s.Corr}
		x := byKey[k]
		if x == nil {
			x = &exchange{client: -1, server: -1}
			byKey[k] = x
		}
		x.at[s.Kind] = s.At
		if s.Kind == wire.ClientSent || s.Kind == wire.ServerRead {
			x.reqBytes = s.Bytes
		} else {
			x.respBytes = s.Bytes
		}
		if s.Kind == wire.ClientSent || s.Kind == wire.ClientRead {
			x.client = s.Node
		} else {
			x.server = s.Node
		}
	}
	// Each follower's exchanges with the leader, in the order they began.
	byFollower := map[int32][]*exchange{}
	for _, x := range byKey {
		if !x.whole() {
			continue
		}
		f, l := x.client, x.server // pull: the follower asks the leader
		if r.mode == raft.Push {
			f, l = l, f
		}
		if l == leader && slices.Contains(followers, f) {
			byFollower[f] = append(byFollower[f], x)
		}
	}
	for _, xs := range byFollower {
		slices.SortFunc(xs, func(a, b *exchange) int { return a.at[wire.ClientSent].Compare(b.at[wire.ClientSent]) })
	}

	var legs [6][]time.Duration
	out := Legs{Commits: len(r.spans)}
	for _, sp := range r.spans {
		var best [6]time.Duration
		var bestAck time.Time
		for _, xs := range byFollower {
			l, ack, ok := splitOne(r.mode, xs, sp, recordBytes)
			if ok && l[5] >= 0 && (bestAck.IsZero() || ack.Before(bestAck)) {
				best, bestAck = l, ack
			}
		}
		if bestAck.IsZero() {
			continue
		}
		out.Split++
		for i := range best {
			legs[i] = append(legs[i], best[i])
		}
	}
	med := func(ds []time.Duration) time.Duration {
		if len(ds) == 0 {
			return 0
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	out.WaitFetch, out.LeaderSend, out.ToFollower = med(legs[0]), med(legs[1]), med(legs[2])
	out.Follower, out.ToLeader, out.LeaderCommit = med(legs[3]), med(legs[4]), med(legs[5])
	return out
}

// splitOne splits proposal sp over one follower's exchanges xs: its six
// legs, when the acknowledgement reached the leader, and whether the
// follower acknowledged the record before the proposal returned. The
// message that carries the record is the first one of at least
// recordBytes sent after the proposal began: smaller ones are heartbeats
// and news of the high watermark.
func splitOne(mode raft.Replication, xs []*exchange, sp span, recordBytes int) ([6]time.Duration, time.Time, bool) {
	var l [6]time.Duration
	if mode == raft.Push {
		// X: the AppendEntries that carried the record; its answer is the
		// acknowledgement.
		var x *exchange
		for _, e := range xs {
			if !e.at[wire.ClientSent].Before(sp.begin) && e.reqBytes >= recordBytes {
				x = e
				break
			}
		}
		if x == nil || x.at[wire.ClientRead].After(sp.end) {
			return l, time.Time{}, false
		}
		ack := x.at[wire.ClientRead]
		l[1] = x.at[wire.ClientSent].Sub(sp.begin)
		l[2] = x.at[wire.ServerRead].Sub(x.at[wire.ClientSent])
		l[3] = x.at[wire.ServerSent].Sub(x.at[wire.ServerRead])
		l[4] = ack.Sub(x.at[wire.ServerSent])
		l[5] = sp.end.Sub(ack)
		return l, ack, true
	}
	// X: the Fetch whose answer carried the record; Y: the follower's next
	// Fetch, its acknowledgement.
	var x, y *exchange
	for i, e := range xs {
		if !e.at[wire.ServerSent].Before(sp.begin) && e.respBytes >= recordBytes {
			x = e
			if i+1 < len(xs) {
				y = xs[i+1]
			}
			break
		}
	}
	if x == nil || y == nil || y.at[wire.ServerRead].After(sp.end) {
		return l, time.Time{}, false
	}
	from := sp.begin
	if x.at[wire.ServerRead].After(sp.begin) {
		l[0] = x.at[wire.ServerRead].Sub(sp.begin)
		from = x.at[wire.ServerRead]
	}
	l[1] = x.at[wire.ServerSent].Sub(from)
	l[2] = x.at[wire.ClientRead].Sub(x.at[wire.ServerSent])
	l[3] = y.at[wire.ClientSent].Sub(x.at[wire.ClientRead])
	l[4] = y.at[wire.ServerRead].Sub(y.at[wire.ClientSent])
	l[5] = sp.end.Sub(y.at[wire.ServerRead])
	return l, y.at[wire.ServerRead], true
}
