package loader

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// Config configures a Loader.
type Config struct {
	// NodeID is the node's id, for events and logs.
	NodeID int32
	// Publishers are told of every image and leader change, in order.
	Publishers []Publisher
	// OnEvent, if set, receives the loader's events on the goroutine that
	// calls the loader (on a server, its quorum.NewListenerQueue); it must
	// not block.
	OnEvent func(Event)
	// Logger receives the loader's log; nil discards it.
	Logger *slog.Logger
	// Clock is the cluster clock the records' append times were read
	// from, for the applied record's lag and the events' times; nil is
	// the wall clock.
	Clock *clock.Clock
	// Now, if set, is read in place of Clock: a simulation's time.
	Now func() time.Time
}

// Loader is Kafka's MetadataLoader: the quorum.Listener of one incarnation
// of a node. Its Handle methods and SnapshotRecords belong to one goroutine
// at a time (on a server, the quorum.NewListenerQueue that runs it, as
// Kafka's loader runs on its own event queue); Image, Leader and Metrics
// are safe from any.
type Loader struct {
	cfg Config
	log *slog.Logger

	// The calling goroutine only.
	img *image.MetadataImage
	// aligned is the last published image that ends a batch: snapshots
	// are taken of it, never of one that ends inside a batch.
	aligned *image.MetadataImage
	pending pending
	// failed is the load error that stopped the loader, nil while it
	// applies.
	failed error
	// replayedOn is the snapshot the first replay follows, if any; the
	// EventReplayed of the first replay is still due while pendingReplay.
	replayedOn    raft.SnapshotID
	snapRecords   int
	hasSnapshot   bool
	pendingReplay bool
	shutdown      bool

	published atomic.Pointer[image.MetadataImage]
	leader    atomic.Pointer[raft.LeaderAndEpoch]

	mu      sync.Mutex
	metrics Metrics
	loadErr error // failed, for readers on other goroutines
}

var _ quorum.Listener = (*Loader)(nil)

var noLeader = raft.LeaderAndEpoch{LeaderID: -1, Epoch: -1}

// New returns a loader whose image is image.Empty.
func New(cfg Config) *Loader {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Loader{
		cfg:           cfg,
		log:           cfg.Logger.With("node", cfg.NodeID, "part", "loader"),
		img:           image.Empty,
		aligned:       image.Empty,
		pendingReplay: true,
		metrics:       Metrics{LastAppliedRecordOffset: -1, LastAppliedRecordTimestamp: -1},
	}
	l.pending.reset(image.Empty)
	l.published.Store(image.Empty)
	l.leader.Store(&noLeader)
	return l
}

// Image is the latest published image, image.Empty before the first.
func (l *Loader) Image() *image.MetadataImage { return l.published.Load() }

// Leader is the raft client's leader as the loader last heard it; LeaderID
// -1 while unknown.
func (l *Loader) Leader() raft.LeaderAndEpoch { return *l.leader.Load() }

// Metrics returns the loader's counters, the lag computed now.
func (l *Loader) Metrics() Metrics {
	l.mu.Lock()
	m := l.metrics
	l.mu.Unlock()
	if m.LastAppliedRecordTimestamp >= 0 {
		m.LastAppliedRecordLagMs = max(l.now().UnixMilli()-m.LastAppliedRecordTimestamp, 0)
	}
	return m
}

// Err is the load error that stopped the loader, nil while it applies.
func (l *Loader) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loadErr
}

// HandleCommit implements quorum.Listener: it replays the batches and
// publishes one image holding them all, unless they end inside a metadata
// transaction: then the image waits for the transaction's end.
func (l *Loader) HandleCommit(batches []storage.Batch) {
	if l.failed != nil || l.shutdown || len(batches) == 0 {
		return
	}
	start := time.Now()
	for i := range batches {
		if err := l.loadBatch(&batches[i]); err != nil {
			l.pending.elapsed += time.Since(start)
			// Publish every record before the failing one, unless they
			// end inside a transaction, which never finished.
			if !l.pending.inTransaction && !l.pending.isEmpty() {
				l.publishPending(l.pending.last)
			}
			l.fail(err)
			return
		}
	}
	l.pending.elapsed += time.Since(start)
	if !l.pending.inTransaction {
		l.publishPending(l.pending.last)
	}
}

// loadError is a record that stopped the loader.
type loadError struct {
	offset     int64
	recordType string
	err        error
}

func (e *loadError) Error() string {
	return fmt.Sprintf("%s at offset %d: %v", e.recordType, e.offset, e.err)
}

func (e *loadError) Unwrap() error { return e.err }

// recordType names the type a framed record's header claims, for a record
// that did not decode.
func recordType(value []byte) string {
	_, n := binary.Uvarint(value)
	if n <= 0 {
		return "record"
	}
	key, m := binary.Uvarint(value[n:])
	if m <= 0 || key > 1<<15 {
		return "record"
	}
	return record.APIKey(key).String()
}

// HandleLoadSnapshot implements quorum.Listener: the snapshot's records,
// replayed on the current image, become the image.
func (l *Loader) HandleLoadSnapshot(s raft.Snapshot) {
	if l.failed != nil || l.shutdown {
		return
	}
	start := time.Now()
	l.mu.Lock()
	l.metrics.HandleLoadSnapshotCount++
	l.mu.Unlock()
	delta := image.NewSnapshotDelta(l.img)
	for i, rec := range s.Records {
		r, err := record.Decode(rec.Value)
		if err != nil {
			l.fail(&loadError{offset: rec.Offset, recordType: recordType(rec.Value), err: fmt.Errorf("record %d of snapshot %v: %w", i, s.ID, err)})
			return
		}
		if err := delta.Replay(r); err != nil {
			l.fail(&loadError{offset: rec.Offset, recordType: record.Name(r), err: fmt.Errorf("record %d of snapshot %v: %w", i, s.ID, err)})
			return
		}
	}
	prov := image.MetadataProvenance{
		LastContainedOffset:    s.ID.EndOffset - 1,
		LastContainedEpoch:     s.ID.Epoch,
		LastContainedLogTimeMs: s.LastContainedLogTimestamp,
		IsOffsetBatchAligned:   true,
	}
	img := delta.Apply(prov)
	// A snapshot ends any transaction the log was in: the snapshot holds
	// only what was committed.
	l.pending.reset(img)
	l.publish(delta, img, Manifest{
		Kind: SnapshotLoad, Provenance: prov, Leader: l.Leader(), Elapsed: time.Since(start),
		Snapshot: s.ID, SnapshotRecords: len(s.Records),
	})
	l.replayedOn, l.snapRecords, l.hasSnapshot, l.pendingReplay = s.ID, len(s.Records), true, true
	l.emit(Event{Kind: EventSnapshotLoaded, Snapshot: s.ID, HasSnapshot: true, Records: len(s.Records), Offset: prov.LastContainedOffset})
}

// HandleLeaderChange implements quorum.Listener.
func (l *Loader) HandleLeaderChange(le raft.LeaderAndEpoch) {
	l.leader.Store(&le)
	if l.shutdown {
		return
	}
	for _, p := range l.cfg.Publishers {
		l.guard(p, func() { p.OnLeaderChange(le) })
	}
}

// SnapshotRecords implements quorum.Listener: the last published image
// that ends a batch, as framed records, at the offset after the last one
// it holds. (Images published before a BeginTransactionRecord, or before a
// record that stopped the loader, may end inside a batch; as Kafka's
// SnapshotGenerator, the loader snapshots none of them.)
func (l *Loader) SnapshotRecords() (int64, [][]byte, error) {
	img := l.aligned
	recs, err := img.Records()
	if err != nil {
		return 0, nil, fmt.Errorf("write image %v as records: %w", img.Provenance(), err)
	}
	out := make([][]byte, len(recs))
	for i, r := range recs {
		if out[i], err = record.Encode(r); err != nil {
			return 0, nil, fmt.Errorf("encode %s of image %v: %w", record.Name(r), img.Provenance(), err)
		}
	}
	return img.Provenance().LastContainedOffset + 1, out, nil
}

// BeginShutdown implements quorum.Listener: the loader publishes nothing
// more.
func (l *Loader) BeginShutdown() { l.shutdown = true }

func (l *Loader) publish(delta *image.MetadataDelta, img *image.MetadataImage, m Manifest) {
	l.img = img
	if img.Provenance().IsOffsetBatchAligned {
		l.aligned = img
	}
	l.published.Store(img)
	prov := img.Provenance()
	mv, _ := img.Features().MetadataVersion()
	l.mu.Lock()
	l.metrics.LastAppliedRecordOffset = prov.LastContainedOffset
	l.metrics.LastAppliedRecordTimestamp = prov.LastContainedLogTimeMs
	l.metrics.CurrentMetadataVersion = mv
	l.mu.Unlock()
	for _, p := range l.cfg.Publishers {
		l.guard(p, func() { p.OnMetadataUpdate(delta, img, m) })
	}
}

// guard calls a publisher; one that panics is counted as an apply error
// and the others are still told, as Kafka's loader hands a publisher's
// failure to its fault handler and goes on.
func (l *Loader) guard(p Publisher, call func()) {
	defer func() {
		if v := recover(); v != nil {
			l.mu.Lock()
			l.metrics.MetadataApplyErrorCount++
			l.mu.Unlock()
			err := fmt.Errorf("publisher %T failed: %v", p, v)
			l.log.Error("publisher failed", "err", err)
			l.emit(Event{Kind: EventApplyError, Err: err})
		}
	}()
	call()
}

// addReplayed reports the first replay after the start or a snapshot.
func (l *Loader) addReplayed(records int, last int64) {
	if !l.pendingReplay {
		return
	}
	l.pendingReplay = false
	l.emit(Event{Kind: EventReplayed, Snapshot: l.replayedOn, HasSnapshot: l.hasSnapshot, SnapshotRecords: l.snapRecords, Records: records, Offset: last})
}

func (l *Loader) fail(err error) {
	l.failed = err
	l.mu.Lock()
	l.loadErr = err
	l.metrics.MetadataLoadErrorCount++
	l.mu.Unlock()
	l.log.Error("metadata load stopped", "err", err)
	ev := Event{Kind: EventLoadError, Err: err, RecordType: "record"}
	if le, ok := err.(*loadError); ok {
		ev.Offset, ev.RecordType, ev.Err = le.offset, le.recordType, le.err
	}
	l.emit(ev)
}

func (l *Loader) emit(e Event) {
	if l.cfg.OnEvent == nil {
		return
	}
	e.Time, e.Node = l.now(), l.cfg.NodeID
	l.cfg.OnEvent(e)
}

// now is the time the loader goes by.
func (l *Loader) now() time.Time {
	if l.cfg.Now != nil {
		return l.cfg.Now()
	}
	return l.cfg.Clock.Now()
}
