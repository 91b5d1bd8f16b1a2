package benchkit

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/storage"
)

// scalePartitionsPerTopic is how the scale images are laid out: topics of
// 100 partitions, three replicas each, as the image package's benchmarks
// lay them out.
const scalePartitionsPerTopic = 100

// snapshotLoadAim is the aim for loading a 1,000,000-partition
// snapshot.
const snapshotLoadAim = 5 * time.Second

// Scale is what the scale measurement found at one image size, on real
// loaders (metadata/loader) in this process, without sockets: what each
// broker's loader does with a snapshot and a change once its raft client
// hands them over.
type Scale struct {
	Partitions int `json:"partitions"`
	Topics     int `json:"topics"`
	// Loaders is how many loaders (one per broker) loaded the snapshot
	// and applied every change: the brokers asked for, or fewer where
	// that many images would not fit the memory bound (LoadersBound).
	Loaders      int    `json:"loaders"`
	LoadersBound string `json:"loadersBound,omitempty"`
	// ImageBytes is the live heap one image holds (runtime.MemStats
	// HeapAlloc after a GC, before and after building it from records);
	// BytesPerPartition divides it by the partitions.
	ImageBytes        uint64  `json:"imageBytes"`
	BytesPerPartition float64 `json:"bytesPerPartition"`
	// SnapshotWrite is image.Records plus record.Encode of every record;
	// SnapshotBytes their size.
	SnapshotWrite time.Duration `json:"snapshotWriteNs"`
	SnapshotBytes int           `json:"snapshotBytes"`
	// SnapshotLoad is Loader.HandleLoadSnapshot (decode, replay, apply,
	// publish) on each loader, one after another.
	SnapshotLoad Spread `json:"snapshotLoad"`
	// ChangeAll runs from handing one PartitionChangeRecord's batch to
	// every loader at once (each on its own goroutine, as each broker's
	// raft loop is) until the last has published it; one sample per change.
	ChangeAll Spread `json:"changeAllLoaders"`
	// ChangeOne is one loader's HandleCommit of that batch.
	ChangeOne Spread `json:"changeOneLoader"`
	Changes   int    `json:"changes"`
	Error     string `json:"error,omitempty"`
}

// scaleBrokerIDs are the brokers the scale images register.
func scaleBrokerIDs(n int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(101 + i)
	}
	return ids
}

// scaleTopicID is topic t's id in a scale image.
func scaleTopicID(t int) record.Uuid { return record.NewUuid(uint64(t+1), uint64(t)*7919+1) }

// scaleRecords are what a controller writes for an image of n partitions
// over brokers: metadata.version, the brokers (unfenced) and topics of
// scalePartitionsPerTopic partitions with three replicas (fewer if there
// are fewer brokers), spread round robin.
func scaleRecords(n int, brokers []int32) []record.Record {
	recs := []record.Record{&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2}}
	for i, id := range brokers {
		recs = append(recs, &record.RegisterBrokerRecord{
			Version: record.RegisterBrokerVersion, BrokerID: id, BrokerEpoch: int64(i + 1),
			IncarnationID: record.NewUuid(uint64(id), 1),
			EndPoints:     []record.BrokerEndpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: uint16(9000 + i)}},
			Features:      []record.BrokerFeature{{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33}},
			LogDirs:       []record.Uuid{record.NewUuid(1, uint64(id))},
		})
	}
	rf := min(3, len(brokers))
	for t := 0; t*scalePartitionsPerTopic < n; t++ {
		id := scaleTopicID(t)
		recs = append(recs, &record.TopicRecord{Name: fmt.Sprintf("scale-%06d", t), TopicID: id})
		for p := 0; p < scalePartitionsPerTopic && t*scalePartitionsPerTopic+p < n; p++ {
			k := t*scalePartitionsPerTopic + p
			replicas := make([]int32, rf)
			for r := range replicas {
				replicas[r] = brokers[(k+r)%len(brokers)]
			}
			recs = append(recs, &record.PartitionRecord{
				Version: record.PartitionVersion, PartitionID: int32(p), TopicID: id,
				Replicas: replicas, Isr: replicas, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
				Leader: replicas[0], Directories: make([]record.Uuid, rf),
			})
		}
	}
	return recs
}

// scaleChange is the i-th change of the scale part: a partition picked
// by a multiplicative hash, its ISR shrunk to its leader or grown back,
// as a follower falling out of and back into the ISR does.
func scaleChange(i, n int, brokers []int32) *record.PartitionChangeRecord {
	k := int((uint64(i)*0x9e3779b97f4a7c15 + 1) >> 33 % uint64(n))
	c := record.NewPartitionChangeRecord(scaleTopicID(k/scalePartitionsPerTopic), int32(k%scalePartitionsPerTopic))
	rf := min(3, len(brokers))
	full := make([]int32, rf)
	for r := range full {
		full[r] = brokers[(k+r)%len(brokers)]
	}
	if i%2 == 0 {
		c.Isr = full[:1]
	} else {
		c.Isr = full
	}
	return c
}

// liveHeap is the heap's live bytes after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// settledHeap is liveHeap once it stops falling: a cluster the run just
// closed may still be letting go of memory, which would otherwise come off
// the image's measure.
func settledHeap() uint64 {
	h := liveHeap()
	for range 10 {
		time.Sleep(20 * time.Millisecond)
		n := liveHeap()
		if n >= h {
			return n
		}
		h = n
	}
	return h
}

// runScale measures an image of n partitions: its memory, a snapshot of
// it written and loaded by every loader, and cfg.ScaleChanges changes
// applied on every loader.
func runScale(cfg MetadataConfig, n int, progress io.Writer) (Scale, error) {
	brokers := scaleBrokerIDs(cfg.Brokers)
	res := Scale{Partitions: n, Topics: (n + scalePartitionsPerTopic - 1) / scalePartitionsPerTopic}
	fail := func(err error) (Scale, error) {
		res.Error = err.Error()
		return res, fmt.Errorf("scale %d partitions: %w", n, err)
	}

	recs := scaleRecords(n, brokers)
	before := settledHeap()
	delta := image.NewMetadataDelta(image.Empty)
	for _, r := range recs {
		if err := delta.Replay(r); err != nil {
			return fail(err)
		}
	}
	img := delta.Apply(image.MetadataProvenance{LastContainedOffset: int64(len(recs) - 1), LastContainedEpoch: 1, IsOffsetBatchAligned: true})
	delta = nil
	after := liveHeap()
	runtime.KeepAlive(recs)
	recs = nil
	if after > before {
		res.ImageBytes = after - before
	}
	res.BytesPerPartition = float64(res.ImageBytes) / float64(n)

	t0 := time.Now()
	out, err := img.Records()
	if err != nil {
		return fail(err)
	}
	var buf []byte
	ends := make([]int, len(out))
	for i, r := range out {
		if buf, err = record.AppendEncode(buf, r); err != nil {
			return fail(err)
		}
		ends[i] = len(buf)
	}
	res.SnapshotWrite, res.SnapshotBytes = time.Since(t0), len(buf)
	out, img = nil, nil
	snap := raft.Snapshot{ID: raft.SnapshotID{EndOffset: int64(len(ends)), Epoch: 1}, LastContainedLogTimestamp: time.Now().UnixMilli()}
	start := 0
	for i, end := range ends {
		snap.Records = append(snap.Records, storage.Record{Offset: int64(i), Value: buf[start:end:end]})
		start = end
	}

	res.Loaders = cfg.Brokers
	if cfg.ScaleMemory > 0 && res.ImageBytes > 0 {
		fit := int(uint64(cfg.ScaleMemory) / res.ImageBytes)
		if fit < res.Loaders {
			res.Loaders = max(fit, 1)
			res.LoadersBound = fmt.Sprintf("%d images of %s fit the %s bound (--scale-memory)", res.Loaders, fmtBytes(res.ImageBytes), fmtBytes(uint64(cfg.ScaleMemory)))
		}
	}
	fmt.Fprintf(progress, "scale %d partitions: image %s (%.0f B/partition), snapshot %s written in %v; loading it on %d loaders\n",
		n, fmtBytes(res.ImageBytes), res.BytesPerPartition, fmtBytes(uint64(res.SnapshotBytes)), fmtDur(res.SnapshotWrite), res.Loaders)

	loaders := make([]*loader.Loader, res.Loaders)
	var loads []time.Duration
	for i := range loaders {
		loaders[i] = loader.New(loader.Config{NodeID: brokers[i]})
		t0 := time.Now()
		loaders[i].HandleLoadSnapshot(snap)
		loads = append(loads, time.Since(t0))
		if err := loaders[i].Err(); err != nil {
			return fail(fmt.Errorf("loader %d: %w", brokers[i], err))
		}
		if got := loaders[i].Image().Topics().NumPartitions(); got != n {
			return fail(fmt.Errorf("loader %d holds %d partitions after the snapshot, want %d", brokers[i], got, n))
		}
	}
	res.SnapshotLoad = SpreadOf(loads)
	snap.Records, buf = nil, nil

	all, one, err := applyChanges(loaders, cfg.ScaleChanges, n, brokers, snap.ID.EndOffset)
	res.Changes = len(all)
	res.ChangeAll, res.ChangeOne = SpreadOf(all), SpreadOf(one)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(progress, "scale %d partitions: snapshot load p50 %v; one change on all %d loaders p50 %v p99 %v\n",
		n, fmtDur(res.SnapshotLoad.P50), res.Loaders, fmtDur(res.ChangeAll.P50), fmtDur(res.ChangeAll.P99))
	return res, nil
}

// applyChanges hands every loader the same one-record batches, changes
// times, each to all loaders at once, and times them.
func applyChanges(loaders []*loader.Loader, changes, n int, brokers []int32, offset int64) (all, one []time.Duration, err error) {
	for i := range changes {
		raw, err := record.Encode(scaleChange(i, n, brokers))
		if err != nil {
			return all, one, err
		}
		b, err := storage.DecodeBatch(storage.AppendBatch(nil, storage.BatchSpec{BaseOffset: offset, LeaderEpoch: 1, Timestamp: time.Now().UnixMilli()}, []storage.Record{{Value: raw}}))
		if err != nil {
			return all, one, err
		}
		took := make([]time.Duration, len(loaders))
		var wg sync.WaitGroup
		t0 := time.Now()
		for j, l := range loaders {
			wg.Go(func() {
				s := time.Now()
				l.HandleCommit([]storage.Batch{b})
				took[j] = time.Since(s)
			})
		}
		wg.Wait()
		all = append(all, time.Since(t0))
		one = append(one, took...)
		for _, l := range loaders {
			if l.Metrics().LastAppliedRecordOffset != offset {
				return all, one, fmt.Errorf("change %d: a loader did not apply offset %d: %v", i, offset, l.Err())
			}
		}
		offset++
	}
	return all, one, nil
}

// fmtBytes prints a byte count in MB (10^6) or KB.
func fmtBytes(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
}
