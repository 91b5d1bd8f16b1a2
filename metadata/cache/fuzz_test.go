package cache

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Whatever request a client's bytes decode to, the answer is built
// without panicking and encodes at the request's version.
func FuzzMetadataAndDescribeCluster(f *testing.F) {
	for _, r := range []kmsg.Request{allTopics(12), metadataRequest(0), metadataRequest(5, "orders", "nope"), byID(12, clicksID, topicID(9)), byID(11, clicksID), describeCluster(2, EndpointBrokers, true), describeCluster(1, 9, false)} {
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
		}
	})
}
