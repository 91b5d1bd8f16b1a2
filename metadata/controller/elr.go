package controller

import (
	"strconv"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// elrEnabled is FeatureControlManager.isElrFeatureEnabled: the finalized
// eligible.leader.replicas.version is at least 1. The feature depends on
// metadata.version 4.0-IV1, whose records carry the ELR fields.
func elrEnabled(img *image.MetadataImage) bool {
	level, _ := img.Features().Level(record.EligibleLeaderReplicasFeature)
	mv, _ := img.Features().MetadataVersion()
	return level >= record.EligibleLeaderReplicasOn && mv >= mv4_0IV1
}

// effectiveMinIsr is getTopicEffectiveMinIsr: the topic's
// min.insync.replicas (its config, else the dynamic cluster default, else
// the controller's own), capped at the topic's replication factor (that
// of its partition 0).
func (c *QuorumController) effectiveMinIsr(img *image.MetadataImage, t *image.TopicImage) int {
	n := c.minInsyncReplicas(img, t.Name())
	if p := t.Partition(0); p != nil {
		n = min(n, len(p.Replicas))
	}
	return n
}

// minInsyncReplicas is the topic's min.insync.replicas as
// ConfigurationControlManager.getTopicConfig finds it.
func (c *QuorumController) minInsyncReplicas(img *image.MetadataImage, topic string) int {
	for _, res := range []image.ConfigResource{{Type: record.ResourceTopic, Name: topic}, {Type: record.ResourceBroker}} {
		if cfg := img.Configs().Resource(res); cfg != nil {
			if v, ok := cfg.Get(minInsyncReplicas); ok {
				// The values were checked when written; a bad one falls
				// through to the next source.
				if n, err := strconv.Atoi(v); err == nil && n >= 1 {
					return n
				}
			}
		}
	}
	return c.minIsrDefault()
}

// minIsrDefault is the controller's own min.insync.replicas.
func (c *QuorumController) minIsrDefault() int {
	if c.cfg.MinInsyncReplicas > 0 {
		return c.cfg.MinInsyncReplicas
	}
	return DefaultMinInsyncReplicas
}
