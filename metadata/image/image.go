package image

// MetadataImage is the metadata state at one offset of the log. It is
// immutable: nothing reachable from it ever changes, so it may be read from
// any goroutine while the next one is built.
type MetadataImage struct {
	provenance MetadataProvenance
	features   *FeaturesImage
	cluster    *ClusterImage
	topics     *TopicsImage
	configs    *ConfigurationsImage
	scram      *ScramImage
	// producerIds is a value: one int64 costs less than a pointer to it.
	producerIds ProducerIdsImage
}

// Empty is the image before the first record.
var Empty = &MetadataImage{
	provenance:  EmptyProvenance,
	features:    emptyFeatures,
	cluster:     emptyCluster,
	topics:      emptyTopics,
	configs:     emptyConfigs,
	scram:       emptyScram,
	producerIds: emptyProducerIds,
}

// Provenance says which record the image ends with.
func (m *MetadataImage) Provenance() MetadataProvenance { return m.provenance }

// Features are the finalized feature levels, metadata.version among them.
func (m *MetadataImage) Features() *FeaturesImage { return m.features }

// Cluster holds the registered brokers.
func (m *MetadataImage) Cluster() *ClusterImage { return m.cluster }

// Topics holds the topics and their partitions.
func (m *MetadataImage) Topics() *TopicsImage { return m.topics }

// Configs holds the dynamic configs of topics, brokers and the cluster.
func (m *MetadataImage) Configs() *ConfigurationsImage { return m.configs }

// Scram holds the SCRAM credentials.
func (m *MetadataImage) Scram() *ScramImage { return m.scram }

// ProducerIds is where the next block of producer ids starts.
func (m *MetadataImage) ProducerIds() ProducerIdsImage { return m.producerIds }

// IsEmpty reports whether the image holds no state (whatever its
// provenance).
func (m *MetadataImage) IsEmpty() bool {
	return m.features.IsEmpty() && m.cluster.IsEmpty() && m.topics.IsEmpty() && m.configs.IsEmpty() &&
		m.producerIds.IsEmpty() && m.scram.IsEmpty()
}

// Equal reports whether two images hold the same state and provenance.
func (m *MetadataImage) Equal(o *MetadataImage) bool {
	return m.provenance == o.provenance && m.features.Equal(o.features) &&
		m.cluster.Equal(o.cluster) && m.topics.Equal(o.topics) && m.configs.Equal(o.configs) &&
		m.producerIds == o.producerIds && m.scram.Equal(o.scram)
}
