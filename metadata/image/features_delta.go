package image

import (
	"fmt"
	"maps"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// FeaturesDelta collects feature level changes.
type FeaturesDelta struct {
	image           *FeaturesImage
	metadataVersion int16            // 0: unchanged
	changes         map[string]int16 // level 0: removed
}

func newFeaturesDelta(img *FeaturesImage) *FeaturesDelta {
	return &FeaturesDelta{image: img, changes: map[string]int16{}}
}

// MetadataVersionChange is the metadata.version the delta sets, if any.
func (d *FeaturesDelta) MetadataVersionChange() (int16, bool) {
	return d.metadataVersion, d.metadataVersion != 0
}

func (d *FeaturesDelta) replay(r *record.FeatureLevelRecord) error {
	switch r.Name {
	case record.MetadataVersionFeature:
		if r.FeatureLevel < record.MetadataVersionMinimum || r.FeatureLevel > record.MetadataVersion4_4IV2 {
			return fmt.Errorf("unsupported metadata.version %d (this reader knows %d to %d)",
				r.FeatureLevel, record.MetadataVersionMinimum, record.MetadataVersion4_4IV2)
		}
		d.metadataVersion = r.FeatureLevel
	case KRaftVersionFeature:
		// Kafka skips it: the quorum, not the image, owns kraft.version.
	default:
		d.changes[r.Name] = r.FeatureLevel
	}
	return nil
}

func (d *FeaturesDelta) finishSnapshot() {
	for n := range d.image.levels {
		if _, ok := d.changes[n]; !ok {
			d.changes[n] = 0
		}
	}
}

func (d *FeaturesDelta) apply() *FeaturesImage {
	next := &FeaturesImage{metadataVersion: d.image.metadataVersion, levels: maps.Clone(d.image.levels)}
	if d.metadataVersion != 0 {
		next.metadataVersion = d.metadataVersion
	}
	for n, l := range d.changes {
		if l == 0 {
			delete(next.levels, n)
		} else {
			next.levels[n] = l
		}
	}
	return next
}
