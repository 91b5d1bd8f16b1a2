package controller

import (
	"fmt"
	"math/rand/v2"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// usableBrokers are the brokers new replicas may go to: registered,
// unfenced and not shutting down, sorted by id.
func usableBrokers(img *image.MetadataImage) []int32 {
	var out []int32
	for _, id := range img.Cluster().BrokerIDs() {
		b := img.Cluster().Broker(id)
		if !b.Fenced && !b.InControlledShutdown {
			out = append(out, id)
		}
	}
	return out
}

// placer spreads replicas over the usable brokers round robin from a
// random start: partition i's replicas are the rf brokers that follow
// start+i (Kafka's StripedReplicaPlacer stripes over racks and shuffles
// within them, also balancing leaders; without racks this is its shape).
type placer struct {
	brokers []int32
	start   int
}

func newPlacer(img *image.MetadataImage, r *rand.Rand) *placer {
	b := usableBrokers(img)
	p := &placer{brokers: b}
	switch {
	case len(b) == 0:
	case r != nil:
		p.start = r.IntN(len(b))
	default:
		p.start = rand.IntN(len(b))
	}
	return p
}

// check is the placer's refusal for rf (INVALID_REPLICATION_FACTOR).
func (p *placer) check(rf int) error {
	switch {
	case rf <= 0:
		return fmt.Errorf("invalid replication factor %d: the replication factor must be positive", rf)
	case len(p.brokers) == 0:
		//lint:ignore ST1005 Kafka's wording, which clients show as is
		return fmt.Errorf("Unable to replicate the partition %d time(s): All brokers are currently fenced or in controlled shutdown.", rf)
	case rf > len(p.brokers):
		// Kafka's wording (ReplicationControlManager around
		// StripedReplicaPlacer's refusal), counting only unfenced brokers.
		//lint:ignore ST1005 Kafka's wording, which clients show as is
		return fmt.Errorf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered and unfenced.",
			rf, rf, len(p.brokers))
	}
	return nil
}

// place returns the replicas of the i-th new partition; check(rf) passed.
func (p *placer) place(i, rf int) []int32 {
	out := make([]int32, rf)
	for j := range rf {
		out[j] = p.brokers[(p.start+i+j)%len(p.brokers)]
	}
	return out
}

// defaultDir is Kafka's ClusterControlManager.defaultDir: the broker's
// only log directory, MIGRATING if it reported none, UNASSIGNED if it has
// several (the broker assigns one).
func defaultDir(img *image.MetadataImage, id int32) record.Uuid {
	b := img.Cluster().Broker(id)
	switch {
	case b == nil:
		return record.DirectoryUnassigned
	case len(b.Directories) == 0:
		return record.DirectoryMigrating
	case len(b.Directories) == 1:
		return b.Directories[0]
	}
	return record.DirectoryUnassigned
}

// newPartition is the PartitionRecord of a new partition on replicas: the
// ISR is the replicas that are usable, the leader its first member.
func newPartition(img *image.MetadataImage, v versions, topic record.Uuid, id int32, replicas []int32) (*record.PartitionRecord, bool) {
	var isr []int32
	for _, r := range replicas {
		if b := img.Cluster().Broker(r); b != nil && !b.Fenced && !b.InControlledShutdown {
			isr = append(isr, r)
		}
	}
	if len(isr) == 0 {
		return nil, false
	}
	rec := &record.PartitionRecord{
		Version: v.partition, PartitionID: id, TopicID: topic,
		Replicas: replicas, Isr: isr, Leader: isr[0],
		LeaderRecoveryState: record.LeaderRecovered,
	}
	if v.directoriesInRecs {
		rec.Directories = make([]record.Uuid, len(replicas))
		for i, r := range replicas {
			rec.Directories[i] = defaultDir(img, r)
		}
	}
	return rec, true
}
