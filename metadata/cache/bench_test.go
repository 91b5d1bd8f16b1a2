package cache

import (
	"fmt"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
)

// BenchmarkMetadataAllTopics answers "every topic" from an image of 3
// brokers and 10,000 partitions (1,000 topics of 10, three replicas each),
// the request a client sends on every metadata refresh.
func BenchmarkMetadataAllTopics(b *testing.B) {
	recs := []record.Record{
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2},
		register(1, 1), register(2, 2), register(3, 3), unfence(1, 1), unfence(2, 2), unfence(3, 3),
	}
	for t := range 1000 {
		id := topicID(uint64(t + 10))
		recs = append(recs, &record.TopicRecord{Name: fmt.Sprintf("topic-%04d", t), TopicID: id})
		for p := range int32(10) {
			recs = append(recs, partition(id, p, 1+p%3, 1+(p+1)%3, 1+(p+2)%3))
		}
	}
	img := replay(b, image.Empty, recs...)
	req := allTopics(MetadataMaxVersion)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		size = len(Metadata(img, testCluster, 1, "PLAINTEXT", req).AppendTo(nil))
	}
	b.ReportMetric(float64(size), "resp-bytes")
}
