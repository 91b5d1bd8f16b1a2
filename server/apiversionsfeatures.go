package server

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsFeatures fills in the feature fields of an ApiVersions
// answer (KIP-584) as Kafka's nodes do: the ranges the node supports
// (SupportedFeatures, also a controller's), and once the metadata image
// has a metadata.version, the finalized levels with the image's offset as
// their epoch. kraft.version, which the quorum owns rather than the
// image, comes from the raft client: a controller always lists it
// (ControllerServer's SimpleApiVersionManager), a broker only above 0
// (KRaftMetadataCache.features).
func (s *Server) apiVersionsFeatures(resp *kmsg.ApiVersionsResponse) {
	for _, f := range SupportedFeatures {
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = f.Name, f.MinSupportedVersion, f.MaxSupportedVersion
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	}
	img := s.image()
	mv, ok := img.Features().MetadataVersion()
	if !ok {
		resp.FinalizedFeaturesEpoch = -1
		return
	}
	resp.FinalizedFeaturesEpoch = img.Provenance().LastContainedOffset
	add := func(name string, level int16) {
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = name, level, level
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	}
	add(record.MetadataVersionFeature, mv)
	for _, name := range img.Features().Names() {
		if l, _ := img.Features().Level(name); l > 0 {
			add(name, l)
		}
	}
	var kv raft.KRaftVersion
	if s.raft != nil {
		kv = s.raft.Status().KRaftVersion
	}
	if s.cfg.Kind == Controller || kv > raft.KRaftVersion0 {
		add(image.KRaftVersionFeature, int16(kv))
	}
}
