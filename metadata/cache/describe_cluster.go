package cache

import (
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndpointType is DescribeCluster's EndpointType (KIP-919): which kind of
// node the client means to describe.
type EndpointType int8

// The endpoint types of Kafka's EndpointType.
const (
	EndpointBrokers     EndpointType = 1
	EndpointControllers EndpointType = 2
)

// DescribeCluster answers a DescribeClusterRequest from img for the broker
// nodeID, whose clients use listener, as Kafka 4.4's
// KafkaApis.handleDescribeCluster does with no authorizer: the
// registered brokers that have the listener, unfenced ones only unless the
// request (v2+) sets IncludeFencedBrokers, each with IsFenced; ControllerID
// is a random alive broker if it is listed, -1 otherwise. A broker
// describes only brokers: EndpointType 2 (controllers) gets
// MISMATCHED_ENDPOINT_TYPE, any other unknown type
// UNSUPPORTED_ENDPOINT_TYPE (INVALID_REQUEST at v0, which has no such
// field), as AuthHelper.computeDescribeClusterResponse answers.
func DescribeCluster(img *image.MetadataImage, clusterID string, nodeID int32, listener string, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	_ = nodeID
	resp, ok := describeEndpoint(EndpointBrokers, req)
	if !ok {
		return resp
	}
	resp.EndpointType = int8(EndpointBrokers)
	resp.ClusterID = clusterID
	resp.ClusterAuthorizedOperations = notAsked
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterOperations
	}
	controller := randomAliveBroker(img)
	resp.ControllerID = -1
	for _, id := range img.Cluster().BrokerIDs() {
		b := img.Cluster().Broker(id)
		ep, ok := b.Listener(listener)
		if !ok || (b.Fenced && !req.IncludeFencedBrokers) {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.Rack, rb.IsFenced = id, ep.Host, int32(ep.Port), b.Rack, b.Fenced
		resp.Brokers = append(resp.Brokers, rb)
		if id == controller {
			resp.ControllerID = id
		}
	}
	return resp
}

// String is the type's name as Kafka prints it.
func (t EndpointType) String() string {
	switch t {
	case EndpointBrokers:
		return "BROKER"
	case EndpointControllers:
		return "CONTROLLER"
	}
	return fmt.Sprintf("UNKNOWN(%d)", int8(t))
}

// describeEndpoint starts the answer of a node that serves endpoints of
// type served; ok is false, and the answer complete, when the request asks
// for another type.
func describeEndpoint(served EndpointType, req *kmsg.DescribeClusterRequest) (*kmsg.DescribeClusterResponse, bool) {
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.Version = req.GetVersion()
	want := EndpointType(req.EndpointType)
	if req.GetVersion() == 0 {
		want = EndpointBrokers
	}
	if want == served {
		return resp, true
	}
	code, msg := kerr.MismatchedEndpointType.Code, fmt.Sprintf("The request was sent to an endpoint of type %s, but we wanted an endpoint of type %s", served, want)
	switch {
	case want != EndpointBrokers && want != EndpointControllers:
		code, msg = kerr.UnsupportedEndpointType.Code, fmt.Sprintf("Unsupported endpoint type %d", int8(want))
		if req.GetVersion() == 0 {
			code = kerr.InvalidRequest.Code
		}
	case req.GetVersion() == 0:
		code = kerr.InvalidRequest.Code
	}
	resp.ErrorCode, resp.ErrorMessage = code, &msg
	resp.ControllerID = -1
	resp.ClusterAuthorizedOperations = notAsked
	return resp, false
}

// Controller is a controller as DescribeCluster lists it.
type Controller struct {
	ID   int32
	Host string
	Port int32
}

// DescribeControllers answers a DescribeClusterRequest on a controller, as
// Kafka 4.4's ControllerApis.handleDescribeCluster does for
// --bootstrap-controller clients (KIP-919): the controllers and the
// quorum's leader as the active one (-1 when it is not listed), or
// UNSUPPORTED_VERSION while the log has set no metadata.version. Kafka
// lists the controllers that registered (RegisterControllerRecord); a
// static quorum's are its voters.
func DescribeControllers(clusterID string, controllers []Controller, leader int32, hasMetadataVersion bool, req *kmsg.DescribeClusterRequest) *kmsg.DescribeClusterResponse {
	resp, ok := describeEndpoint(EndpointControllers, req)
	if !ok {
		return resp
	}
	if !hasMetadataVersion {
		msg := "There is no finalized MetadataVersion, so direct-to-controller communication is not supported."
		resp.ErrorCode, resp.ErrorMessage, resp.ControllerID, resp.ClusterAuthorizedOperations = kerr.UnsupportedVersion.Code, &msg, -1, notAsked
		return resp
	}
	resp.EndpointType = int8(EndpointControllers)
	resp.ClusterID = clusterID
	resp.ClusterAuthorizedOperations = notAsked
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterOperations
	}
	resp.ControllerID = -1
	for _, c := range controllers {
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port = c.ID, c.Host, c.Port
		resp.Brokers = append(resp.Brokers, rb)
		if c.ID == leader {
			resp.ControllerID = leader
		}
	}
	return resp
}
