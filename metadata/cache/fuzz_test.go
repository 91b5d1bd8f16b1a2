package cache

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Whatever Metadata, DescribeCluster or DescribeConfigs request a
// client's bytes decode to, the answer is built
// without panicking and encodes at the request's version.
func FuzzMetadataAndDescribeCluster(f *testing.F) {
	for _, r := range []kmsg.Request{describeConfigs(4, true, resource(kmsg.ConfigResourceTypeTopic, "orders", "a"), resource(kmsg.ConfigResourceTypeBroker, "")), describeConfigs(1, false, resource(kmsg.ConfigResourceTypeBroker, "7")), allTopics(12), metadataRequest(0), metadataRequest(5, "orders", "nope"), byID(12, clicksID, topicID(9)), byID(11, clicksID), describeCluster(2, EndpointBrokers, true), describeCluster(1, 9, false)} {
		f.Add(r.Key(), r.GetVersion(), r.AppendTo(nil))
	}
	img := testImage(f)
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		switch key {
		case kmsg.Metadata.Int16():
			req := kmsg.NewPtrMetadataRequest()
			req.Version = version % (MetadataMaxVersion + 1)
			if req.Version < 0 || req.ReadFrom(body) != nil {
				return
			}
			Metadata(img, testCluster, 101, "PLAINTEXT", req).AppendTo(nil)
		case kmsg.DescribeCluster.Int16():
			req := kmsg.NewPtrDescribeClusterRequest()
			req.Version = version % (DescribeClusterMaxVersion + 1)
			if req.Version < 0 || req.ReadFrom(body) != nil {
				return
			}
			DescribeCluster(img, testCluster, 101, "PLAINTEXT", req).AppendTo(nil)
		case kmsg.DescribeConfigs.Int16():
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.Version = DescribeConfigsMinVersion + version%(DescribeConfigsMaxVersion-DescribeConfigsMinVersion+1)
			if req.Version < DescribeConfigsMinVersion || req.ReadFrom(body) != nil {
				return
			}
			DescribeConfigs(img, 101, req).AppendTo(nil)
		}
	})
}
