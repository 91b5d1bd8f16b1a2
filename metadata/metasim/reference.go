package metasim

import (
	"fmt"
	"hash/fnv"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// reference is the committed log as the nodes applied it, and its replay:
// the first node to apply an offset writes it down, every other node must
// apply the same record there, and the replay (one image per batch, made
// independently of any node's loader) is what every node's image must
// equal at the offset it applied. The committed-log invariants are checked
// as the log grows.
type reference struct {
	// log holds a hash of each committed record (value, epoch, control).
	log  []uint64
	img  *image.MetadataImage
	imgs map[int64]*image.MetadataImage // the image at each batch's last offset
	// topics are the topics whose creation was acknowledged and not yet
	// deleted in the log.
	acked map[record.Uuid]string
	// created are the topic ids a TopicRecord of the log created.
	created map[record.Uuid]bool
	// topicRecords counts the TopicRecords of each name in the log.
	topicRecords map[string]int
	// partitions is each partition's last registration in the log.
	partitions map[partitionKey]*image.PartitionRegistration
}

type partitionKey struct {
	topic record.Uuid
	id    int32
}

func newReference() *reference {
	return &reference{
		img:          image.Empty,
		imgs:         map[int64]*image.MetadataImage{},
		acked:        map[record.Uuid]string{},
		created:      map[record.Uuid]bool{},
		topicRecords: map[string]int{},
		partitions:   map[partitionKey]*image.PartitionRegistration{},
	}
}

func entryHash(b *storage.Batch, r storage.Record) uint64 {
	h := fnv.New64a()
	h.Write(r.Value)
	h.Write([]byte{byte(b.PartitionLeaderEpoch), byte(b.PartitionLeaderEpoch >> 8)})
	if b.IsControl() {
		h.Write([]byte{1})
	}
	return h.Sum64()
}

// observe takes the batches a node applied.
func (ref *reference) observe(node int32, batches []storage.Batch) error {
	for i := range batches {
		b := &batches[i]
		recs, err := b.Records()
		if err != nil {
			return fmt.Errorf("node %d: committed batch at %d: %w", node, b.FirstOffset, err)
		}
		fresh := false
		for _, r := range recs {
			h := entryHash(b, r)
			switch {
			case r.Offset < int64(len(ref.log)):
				if ref.log[r.Offset] != h {
					return fmt.Errorf("ConsistentCommittedLog: node %d applied another record at committed offset %d", node, r.Offset)
				}
			case r.Offset == int64(len(ref.log)):
				ref.log = append(ref.log, h)
				fresh = true
			default:
				return fmt.Errorf("node %d applied offset %d past the committed log's end %d", node, r.Offset, len(ref.log))
			}
		}
		if fresh {
			if err := ref.extend(b, recs); err != nil {
				return err
			}
		}
	}
	return nil
}

// extend replays a batch new to the log and checks the log's invariants
// on the image after it.
func (ref *reference) extend(b *storage.Batch, recs []storage.Record) error {
	d := image.NewMetadataDelta(ref.img)
	removed := map[record.Uuid]bool{}
	if !b.IsControl() {
		for _, r := range recs {
			rec, err := record.Decode(r.Value)
			if err != nil {
				return fmt.Errorf("committed record at %d: %w", r.Offset, err)
			}
			if err := d.Replay(rec); err != nil {
				return fmt.Errorf("replay committed %s at %d: %w", record.Name(rec), r.Offset, err)
			}
			switch x := rec.(type) {
			case *record.TopicRecord:
				ref.created[x.TopicID] = true
				ref.topicRecords[x.Name]++
			case *record.RemoveTopicRecord:
				removed[x.TopicID] = true
			}
		}
	}
	last := recs[len(recs)-1].Offset
	ref.img = d.Apply(image.MetadataProvenance{
		LastContainedOffset:    last,
		LastContainedEpoch:     b.PartitionLeaderEpoch,
		LastContainedLogTimeMs: b.MaxTimestamp,
		IsOffsetBatchAligned:   true,
	})
	ref.imgs[last] = ref.img
	for id := range removed {
		delete(ref.acked, id)
	}
	return ref.checkImage(last)
}

// checkImage checks a committed image: acknowledged topics are there, no
// fenced broker leads, and no partition's leader epoch went back.
func (ref *reference) checkImage(off int64) error {
	img := ref.img
	for id, name := range ref.acked {
		if img.Topics().Topic(id) == nil {
			return fmt.Errorf("AcknowledgedTopicKept: topic %s (%v), whose creation was acknowledged, is not in the committed image at %d, and no delete committed", name, id, off)
		}
	}
	cluster := img.Cluster()
	for id, t := range img.Topics().Topics() {
		for p, reg := range t.Partitions() {
			if reg.HasLeader() {
				if br := cluster.Broker(reg.Leader); br == nil || br.Fenced {
					return fmt.Errorf("FencedBrokerLeadsNothing: broker %d leads %s-%d in the committed image at %d but is fenced or unregistered", reg.Leader, t.Name(), p, off)
				}
			}
			if reg.HasLeader() && !reg.InIsr(reg.Leader) {
				return fmt.Errorf("LeaderInIsr: %s-%d's leader %d is not in its ISR %v at %d", t.Name(), p, reg.Leader, reg.Isr, off)
			}
			for _, r := range reg.Isr {
				if !reg.HasReplica(r) {
					return fmt.Errorf("IsrOfReplicas: %s-%d's ISR %v holds %d, not a replica (%v) at %d", t.Name(), p, reg.Isr, r, reg.Replicas, off)
				}
			}
			k := partitionKey{id, p}
			prev, ok := ref.partitions[k]
			if ok && reg.LeaderEpoch < prev.LeaderEpoch {
				return fmt.Errorf("MonotonicLeaderEpoch: %s-%d has leader epoch %d at %d after %d", t.Name(), p, reg.LeaderEpoch, off, prev.LeaderEpoch)
			}
			if ok && reg.PartitionEpoch < prev.PartitionEpoch {
				return fmt.Errorf("MonotonicPartitionEpoch: %s-%d has partition epoch %d at %d after %d", t.Name(), p, reg.PartitionEpoch, off, prev.PartitionEpoch)
			}
			if ok && !reg.Equal(prev) && reg.PartitionEpoch == prev.PartitionEpoch {
				return fmt.Errorf("MonotonicPartitionEpoch: %s-%d changed at %d in partition epoch %d", t.Name(), p, off, reg.PartitionEpoch)
			}
			ref.partitions[k] = reg
		}
	}
	return nil
}

// acknowledged notes a creation the client was told succeeded: the topic
// must already be in the committed log, and stay in it until a delete.
func (ref *reference) acknowledged(name string, id record.Uuid) error {
	if !ref.created[id] {
		return fmt.Errorf("AcknowledgedTopicKept: creation of %s (%v) acknowledged before its TopicRecord committed", name, id)
	}
	if t := ref.img.Topics().Topic(id); t != nil {
		ref.acked[id] = name
	}
	// Otherwise a delete committed before the answer arrived.
	return nil
}

// deleteAcknowledged notes a deletion a client was told succeeded: the
// topic it names was created, and is gone from the committed log.
func (ref *reference) deleteAcknowledged(name string, id record.Uuid) error {
	if !ref.created[id] || ref.img.Topics().Topic(id) != nil {
		return fmt.Errorf("AcknowledgedDelete: deletion of %s (%v) acknowledged, but the committed log does not show it deleted", name, id)
	}
	return nil
}

// growthAcknowledged notes a CreatePartitions a client was told
// succeeded: the topic has at least count partitions in the committed log,
// unless a topic of that name was created (so deleted) since the request
// went out, when gen TopicRecords of that name were committed.
func (ref *reference) growthAcknowledged(name string, gen int, count int32) error {
	if ref.topicRecords[name] != gen {
		return nil
	}
	if t := ref.img.Topics().TopicByName(name); t != nil && t.NumPartitions() < int(count) {
		return fmt.Errorf("AcknowledgedGrowth: %s grown to %d partitions acknowledged, the committed log has %d", name, count, t.NumPartitions())
	}
	return nil
}

// sameState reports whether a node's image holds what the reference's does.
func sameState(a, b *image.MetadataImage) bool {
	return a.Provenance().LastContainedOffset == b.Provenance().LastContainedOffset &&
		a.Features().Equal(b.Features()) && a.Cluster().Equal(b.Cluster()) && a.Topics().Equal(b.Topics()) &&
		a.Configs().Equal(b.Configs()) && a.ProducerIds() == b.ProducerIds() && a.Scram().Equal(b.Scram())
}
