package engine

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/clock"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
)

// changeTracker is a loader publisher that keeps the last change to the
// cluster's metadata a node applied (a broker registered or fenced, a topic
// created, a partition's leader moved) with when the controller appended
// it and when the node applied it: how long the change took to reach the
// node. NoOps and the background load's configs are not changes.
type changeTracker struct {
	last  atomic.Pointer[view.MetadataChange]
	clock *clock.Clock // the append times are cluster time
}

func (c *changeTracker) publisher() loader.Publisher {
	return loader.PublisherFuncs{Update: func(d *image.MetadataDelta, img *image.MetadataImage, m loader.Manifest) {
		if m.Kind != loader.LogDelta {
			return // a snapshot is the whole state, not a change
		}
		what, ok := describeChange(d, img)
		if !ok {
			return
		}
		c.last.Store(&view.MetadataChange{
			Offset:           m.Provenance.LastContainedOffset,
			What:             what,
			AppendTimestamp:  m.Provenance.LastContainedLogTimeMs,
			AppliedTimestamp: c.clock.Now().UnixMilli(),
			AppliedAfterUs:   c.clock.Since(time.UnixMilli(m.Provenance.LastContainedLogTimeMs)).Microseconds(),
		})
	}}
}

// maxChangeParts bounds how many changes one description names.
const maxChangeParts = 2

// describeChange says in a few words what a delta changed in the
// cluster's metadata; ok is false when it changed none of it.
func describeChange(d *image.MetadataDelta, img *image.MetadataImage) (string, bool) {
	var parts []string
	if fd := d.FeaturesDelta(); fd != nil {
		if mv, ok := fd.MetadataVersionChange(); ok {
			parts = append(parts, fmt.Sprintf("metadata.version %d", mv))
		}
	}
	if cd := d.ClusterDelta(); cd != nil {
		for _, id := range cd.ChangedBrokers() {
			prev, next := d.Image().Cluster().Broker(id), img.Cluster().Broker(id)
			switch {
			case next == nil:
				parts = append(parts, fmt.Sprintf("broker %d unregistered", id))
			case prev == nil || prev.Epoch != next.Epoch:
				parts = append(parts, fmt.Sprintf("broker %d registered", id))
			case prev.Fenced != next.Fenced && next.Fenced:
				parts = append(parts, fmt.Sprintf("broker %d fenced", id))
			case prev.Fenced != next.Fenced:
				parts = append(parts, fmt.Sprintf("broker %d unfenced", id))
			case next.InControlledShutdown && !prev.InControlledShutdown:
				parts = append(parts, fmt.Sprintf("broker %d shutting down", id))
			}
		}
	}
	if td := d.TopicsDelta(); td != nil {
		for _, t := range td.ChangedTopics() {
			if t.Created() {
				parts = append(parts, fmt.Sprintf("topic %s created", t.Name()))
				continue
			}
			for p, reg := range t.PartitionChanges() {
				parts = append(parts, fmt.Sprintf("%s-%d leader %s isr %s", t.Name(), p, leaderWord(reg.Leader), idList(reg.Isr)))
			}
		}
		if d.Image().Topics().Len() > img.Topics().Len() {
			parts = append(parts, "topic deleted")
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	if len(parts) > maxChangeParts {
		return fmt.Sprintf("%s and %d more", strings.Join(parts[:maxChangeParts], ", "), len(parts)-maxChangeParts), true
	}
	return strings.Join(parts, ", "), true
}
