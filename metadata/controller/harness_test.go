package controller

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quorum.Node is what the integrator hands New.
var _ Raft = (*quorum.Node)(nil)

const testCluster = "kraftlab-test-cluster"

// fakeClock is a clock the test advances.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeCommit is a commit the fake raft completes.
type fakeCommit struct {
	done        chan struct{}
	err         error
	first, last int64
}

func (f *fakeCommit) Done() <-chan struct{}        { return f.done }
func (f *fakeCommit) Err() error                   { return f.err }
func (f *fakeCommit) Offsets() (first, last int64) { return f.first, f.last }

// entry is one appended batch the fake raft has not committed yet.
type entry struct {
	recs   []record.Record
	commit *fakeCommit
}

// harness is a controller over an in-memory raft: it assigns offsets,
// decodes what the controller appends, replays it into the committed image
// (failing the test if the image refuses a record) and hands the images
// back, as the loader will.
type harness struct {
	t     testing.TB
	clock *fakeClock
	ctl   *QuorumController

	mu     sync.Mutex
	epoch  int32 // the epoch the fake raft leads, -1 if none
	hold   bool  // keep appends uncommitted until commit()
	end    int64 // next offset
	img    *image.MetadataImage
	queue  []entry
	log    []record.Record // every committed record, in offset order
	events []Event
}

type harnessOpts struct {
	cfg  Config
	hold bool
	// bootstrap records are committed before the controller starts.
	bootstrap []record.Record
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, clock: &fakeClock{t: time.Unix(1_700_000_000, 0)}, epoch: -1, hold: o.hold, img: image.Empty}
	if len(o.bootstrap) > 0 {
		h.commitRecords(o.bootstrap)
	}
	cfg := o.cfg
	cfg.NodeID = 1
	if cfg.ClusterID == "" {
		cfg.ClusterID = testCluster
	}
	cfg.Clock = h.clock.Now
	cfg.OnEvent = func(ev Event) {
		h.mu.Lock()
		h.events = append(h.events, ev)
		h.mu.Unlock()
	}
	ctl, err := newController(cfg, h.append)
	if err != nil {
		t.Fatal(err)
	}
	h.ctl = ctl
	t.Cleanup(ctl.Close)
	ctl.HandleCommittedImage(h.image())
	return h
}

// lead makes the fake raft lead epoch and tells the controller.
func (h *harness) lead(epoch int32) {
	h.mu.Lock()
	h.epoch = epoch
	h.mu.Unlock()
	h.ctl.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: 1, Epoch: epoch})
	h.sync()
}

// follow makes another node the leader of epoch; what the fake raft held
// fails, as quorum.Node fails its appends when it loses the leadership.
func (h *harness) follow(leader, epoch int32) {
	h.fail(fmt.Errorf("epoch %d: %w", epoch, quorum.ErrNotLeader))
	h.ctl.HandleLeaderChange(raft.LeaderAndEpoch{LeaderID: leader, Epoch: epoch})
	h.sync()
}

func (h *harness) append(epoch int32, records [][]byte) commit {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &fakeCommit{done: make(chan struct{}), first: -1, last: -1}
	if epoch != h.epoch {
		c.err = fmt.Errorf("append for epoch %d: %w", epoch, quorum.ErrNotLeader)
		close(c.done)
		return c
	}
	recs := make([]record.Record, len(records))
	for i, b := range records {
		r, err := record.Decode(b)
		if err != nil {
			h.t.Errorf("controller appended a record that does not decode: %v", err)
			c.err = err
			close(c.done)
			return c
		}
		recs[i] = r
	}
	c.first, c.last = h.end, h.end+int64(len(recs))-1
	h.end += int64(len(recs))
	h.queue = append(h.queue, entry{recs: recs, commit: c})
	if !h.hold {
		h.commitLocked(true)
	}
	return c
}

// commitLocked commits every queued batch: the image first, then the
// commits (imageFirst), or the other way round.
func (h *harness) commitLocked(imageFirst bool) {
	q := h.queue
	h.queue = nil
	if len(q) == 0 {
		return
	}
	d := image.NewMetadataDelta(h.img)
	for _, e := range q {
		for _, r := range e.recs {
			if err := d.Replay(r); err != nil {
				h.t.Errorf("the image refuses the controller's %s: %v", record.Name(r), err)
			}
			h.log = append(h.log, r)
		}
	}
	last := q[len(q)-1].commit.last
	h.img = d.Apply(image.MetadataProvenance{LastContainedOffset: last, LastContainedEpoch: max(h.epoch, 0), LastContainedLogTimeMs: h.clock.Now().UnixMilli(), IsOffsetBatchAligned: true})
	if imageFirst {
		h.ctl.HandleCommittedImage(h.img)
	}
	for _, e := range q {
		close(e.commit.done)
	}
	if !imageFirst {
		h.ctl.HandleCommittedImage(h.img)
	}
}

// commit commits what the held raft has queued.
func (h *harness) commit(imageFirst bool) {
	h.mu.Lock()
	h.commitLocked(imageFirst)
	h.mu.Unlock()
}

// publishOnly hands the controller an image with the queued batches
// without completing their commits (the loader ran ahead of the commit
// notification).
func (h *harness) publishOnly() {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := image.NewMetadataDelta(h.img)
	var last int64 = h.img.Provenance().LastContainedOffset
	for _, e := range h.queue {
		for _, r := range e.recs {
			if err := d.Replay(r); err != nil {
				h.t.Errorf("the image refuses the controller's %s: %v", record.Name(r), err)
			}
			h.log = append(h.log, r)
		}
		last = e.commit.last
	}
	h.img = d.Apply(image.MetadataProvenance{LastContainedOffset: last, LastContainedEpoch: max(h.epoch, 0)})
	h.ctl.HandleCommittedImage(h.img)
	// The commits complete later, through completeOnly.
}

// completeOnly completes the queued commits, whose records publishOnly
// already published.
func (h *harness) completeOnly() {
	h.mu.Lock()
	q := h.queue
	h.queue = nil
	h.mu.Unlock()
	for _, e := range q {
		close(e.commit.done)
	}
}

// fail fails every queued commit with err (the leadership was lost).
func (h *harness) fail(err error) {
	h.mu.Lock()
	q := h.queue
	h.queue = nil
	h.epoch = -1
	h.mu.Unlock()
	for _, e := range q {
		e.commit.err = err
		close(e.commit.done)
	}
}

// commitRecords commits records another writer appended.
func (h *harness) commitRecords(recs []record.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := image.NewMetadataDelta(h.img)
	for _, r := range recs {
		if err := d.Replay(r); err != nil {
			h.t.Fatalf("bootstrap %s: %v", record.Name(r), err)
		}
		h.log = append(h.log, r)
	}
	h.end += int64(len(recs))
	h.img = d.Apply(image.MetadataProvenance{LastContainedOffset: h.end - 1, LastContainedEpoch: max(h.epoch, 0)})
	if h.ctl != nil {
		h.ctl.HandleCommittedImage(h.img)
	}
}

func (h *harness) image() *image.MetadataImage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.img
}

func (h *harness) records() []record.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]record.Record(nil), h.log...)
}

func (h *harness) eventsOf(k EventKind) []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Event
	for _, e := range h.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// sync waits until the loop has run everything posted before it, and
// has published its metrics.
func (h *harness) sync() {
	h.t.Helper()
	done := make(chan struct{})
	if !h.ctl.box.post(func() { h.ctl.publish(); close(done) }) {
		return
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("controller loop did not run")
	}
}

// tick advances the clock and lets the loop run its timers (which run
// after a round of events).
func (h *harness) tick(d time.Duration) {
	h.clock.Advance(d)
	h.sync()
	h.sync() // the round above ran the timers; this one sees their commits posted
}

// send hands req to the controller; the response arrives on the channel.
func (h *harness) send(req kmsg.Request) <-chan kmsg.Response {
	ch := make(chan kmsg.Response, 1)
	if !h.ctl.box.post(func() { h.ctl.handle(req, func(r kmsg.Response) { ch <- r }) }) {
		h.t.Fatal("controller closed")
	}
	return ch
}

// do sends req and waits for its response.
func (h *harness) do(req kmsg.Request) kmsg.Response {
	h.t.Helper()
	return h.wait(h.send(req))
}

func (h *harness) wait(ch <-chan kmsg.Response) kmsg.Response {
	h.t.Helper()
	var resp kmsg.Response
	poll.Until(h.t, 10*time.Second, "a response", func() bool {
		select {
		case resp = <-ch:
			return true
		default:
			return false
		}
	})
	return resp
}

// incarnation is a fixed incarnation id per broker.
func incarnation(id int32, gen byte) [16]byte {
	return record.NewUuid(uint64(id), uint64(gen)+1000)
}

// logDir is broker id's one log directory.
func logDir(id int32) [16]byte { return record.NewUuid(uint64(id)<<8, 7777) }

func registration(id int32) *kmsg.BrokerRegistrationRequest {
	r := kmsg.NewPtrBrokerRegistrationRequest()
	r.Version = 4
	r.BrokerID, r.ClusterID, r.IncarnationID = id, testCluster, incarnation(id, 0)
	l := kmsg.NewBrokerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "PLAINTEXT", "127.0.0.1", uint16(9000+id)
	r.Listeners = append(r.Listeners, l)
	f := kmsg.NewBrokerRegistrationRequestFeature()
	f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = record.MetadataVersionFeature, record.MetadataVersionMinimum, record.MetadataVersion4_4IV2
	r.Features = append(r.Features, f)
	elr := kmsg.NewBrokerRegistrationRequestFeature()
	elr.Name, elr.MinSupportedVersion, elr.MaxSupportedVersion = record.EligibleLeaderReplicasFeature, 0, record.EligibleLeaderReplicasOn
	r.Features = append(r.Features, elr)
	r.LogDirs = [][16]byte{logDir(id)}
	r.PreviousBrokerEpoch = -1
	return r
}

func heartbeat(id int32, epoch, offset int64) *kmsg.BrokerHeartbeatRequest {
	r := kmsg.NewPtrBrokerHeartbeatRequest()
	r.Version = 1
	r.BrokerID, r.BrokerEpoch, r.CurrentMetadataOffset = id, epoch, offset
	return r
}

// register registers broker id and returns its epoch.
func (h *harness) register(id int32) int64 {
	h.t.Helper()
	resp := h.do(registration(id)).(*kmsg.BrokerRegistrationResponse)
	if resp.ErrorCode != 0 {
		h.t.Fatalf("register broker %d: error %d", id, resp.ErrorCode)
	}
	return resp.BrokerEpoch
}

// heartbeatCaughtUp heartbeats broker id at the committed image's offset.
func (h *harness) heartbeatCaughtUp(id int32, epoch int64) *kmsg.BrokerHeartbeatResponse {
	h.t.Helper()
	return h.do(heartbeat(id, epoch, h.image().Provenance().LastContainedOffset)).(*kmsg.BrokerHeartbeatResponse)
}

// cluster starts an active controller with unfenced brokers 101..100+n.
func cluster(t testing.TB, n int, cfg Config) (*harness, map[int32]int64) {
	h := newHarness(t, harnessOpts{cfg: cfg})
	h.lead(1)
	epochs := map[int32]int64{}
	for i := range int32(n) {
		epochs[101+i] = h.register(101 + i)
	}
	for id, e := range epochs {
		if r := h.heartbeatCaughtUp(id, e); r.IsFenced || r.ErrorCode != 0 {
			t.Fatalf("broker %d still fenced after catching up: %+v", id, r)
		}
	}
	return h, epochs
}

func createTopic(name string, partitions int32, rf int16) *kmsg.CreateTopicsRequest {
	r := kmsg.NewPtrCreateTopicsRequest()
	r.Version = 7
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
	r.Topics = append(r.Topics, t)
	return r
}

func (h *harness) createTopic(name string, partitions int32, rf int16) *image.TopicImage {
	h.t.Helper()
	resp := h.do(createTopic(name, partitions, rf)).(*kmsg.CreateTopicsResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		h.t.Fatalf("create topic %s: %+v", name, resp.Topics)
	}
	t := h.image().Topics().TopicByName(name)
	if t == nil {
		h.t.Fatalf("topic %s answered created but not in the committed image", name)
	}
	return t
}
