package image

import (
	"maps"
	"sort"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// KRaftVersionFeature is kraft.version, which Kafka keeps out of the
// image (KAFKA-18979): the quorum owns it.
const KRaftVersionFeature = "kraft.version"

// FeaturesImage holds the finalized features: metadata.version apart, as
// Kafka keeps it, and the others (group.version, transaction.version, …)
// by name.
type FeaturesImage struct {
	metadataVersion int16 // 0: none finalized yet
	levels          map[string]int16
}

var emptyFeatures = &FeaturesImage{levels: map[string]int16{}}

// MetadataVersion is the finalized metadata.version feature level, and
// false when the log has not set one.
func (f *FeaturesImage) MetadataVersion() (int16, bool) {
	return f.metadataVersion, f.metadataVersion != 0
}

// Level is the finalized level of a feature other than metadata.version.
func (f *FeaturesImage) Level(name string) (int16, bool) {
	l, ok := f.levels[name]
	return l, ok
}

// Names lists the features other than metadata.version, sorted.
func (f *FeaturesImage) Names() []string {
	names := make([]string, 0, len(f.levels))
	for n := range f.levels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// IsEmpty reports whether no feature is finalized.
func (f *FeaturesImage) IsEmpty() bool { return f.metadataVersion == 0 && len(f.levels) == 0 }

// Equal reports whether two images finalize the same levels.
func (f *FeaturesImage) Equal(o *FeaturesImage) bool {
	return f.metadataVersion == o.metadataVersion && maps.Equal(f.levels, o.levels)
}

func (f *FeaturesImage) records() []record.Record {
	var out []record.Record
	// metadata.version first, at version 0: it says how to read the rest.
	if f.metadataVersion != 0 {
		out = append(out, &record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: f.metadataVersion})
	}
	for _, n := range f.Names() {
		out = append(out, &record.FeatureLevelRecord{Name: n, FeatureLevel: f.levels[n]})
	}
	return out
}
