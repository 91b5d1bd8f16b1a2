package cache

import (
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Register serves Metadata, DescribeCluster, DescribeConfigs and
// DescribeTopicPartitions on mux from the image
// current returns (a broker's loader's latest), read once per request.
func Register(mux *wire.Mux, current func() *image.MetadataImage, clusterID string, nodeID int32, listener string) error {
	h := wire.HandlerFunc(func(req *wire.Request) {
		switch body := req.Body.(type) {
		case *kmsg.MetadataRequest:
			req.Respond(Metadata(current(), clusterID, nodeID, listener, body))
		case *kmsg.DescribeClusterRequest:
			req.Respond(DescribeCluster(current(), clusterID, nodeID, listener, body))
		case *kmsg.DescribeConfigsRequest:
			req.Respond(DescribeConfigs(current(), nodeID, body))
		case *kmsg.DescribeTopicPartitionsRequest:
			req.Respond(DescribeTopicPartitions(current(), listener, body))
		}
	})
	for _, api := range APIs {
		if err := mux.Handle(api, h); err != nil {
			return err
		}
	}
	return nil
}
