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
	return serveImage(mux, current, nil, clusterID, nodeID, listener)
}

// RegisterWithController is Register for a broker of the ZooKeeper era:
// its answers name the real controller, controller's id (a broker
// clients send CreateTopics to), where a KRaft broker names any alive
// broker, which forwards.
func RegisterWithController(mux *wire.Mux, current func() *image.MetadataImage, controller func() int32, clusterID string, nodeID int32, listener string) error {
	return serveImage(mux, current, controller, clusterID, nodeID, listener)
}

func serveImage(mux *wire.Mux, current func() *image.MetadataImage, controller func() int32, clusterID string, nodeID int32, listener string) error {
	h := wire.HandlerFunc(func(req *wire.Request) {
		switch body := req.Body.(type) {
		case *kmsg.MetadataRequest:
			resp := Metadata(current(), clusterID, nodeID, listener, body)
			if controller != nil {
				resp.ControllerID = controller()
			}
			req.Respond(resp)
		case *kmsg.DescribeClusterRequest:
			resp := DescribeCluster(current(), clusterID, nodeID, listener, body)
			if controller != nil && resp.ErrorCode == 0 {
				resp.ControllerID = controller()
			}
			req.Respond(resp)
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
