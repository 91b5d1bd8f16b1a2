package cache

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeCluster(version int16, endpoint EndpointType, fenced bool) *kmsg.DescribeClusterRequest {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.EndpointType, req.IncludeFencedBrokers = version, int8(endpoint), fenced
	return req
}

func TestDescribeClusterListsBrokersOnTheListener(t *testing.T) {
	img := testImage(t)
	for _, tc := range []struct {
		name       string
		req        *kmsg.DescribeClusterRequest
		brokers    []int32
		fenced     []bool
		controller []int32 // the ids it may be
	}{
		{"unfenced only", describeCluster(2, EndpointBrokers, false), []int32{101, 102}, []bool{false, false}, []int32{101, 102, -1}},
		{"fenced too, marked", describeCluster(2, EndpointBrokers, true), []int32{101, 102, 103}, []bool{false, false, true}, []int32{101, 102, -1}},
		{"v0 describes brokers", describeCluster(0, 0, false), []int32{101, 102}, []bool{false, false}, []int32{101, 102, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := DescribeCluster(img, testCluster, 101, "PLAINTEXT", tc.req)
			if resp.ErrorCode != 0 || resp.ClusterID != testCluster || resp.EndpointType != int8(EndpointBrokers) {
				t.Fatalf("answer %+v", resp)
			}
			var ids []int32
			var fenced []bool
			for _, b := range resp.Brokers {
				ids, fenced = append(ids, b.NodeID), append(fenced, b.IsFenced)
			}
			if !slices.Equal(ids, tc.brokers) || !slices.Equal(fenced, tc.fenced) {
				t.Errorf("brokers %v fenced %v, want %v %v", ids, fenced, tc.brokers, tc.fenced)
			}
			// 104 is alive but not on PLAINTEXT: when it is drawn, the
			// answer says -1 rather than name a broker it does not list.
			if !slices.Contains(tc.controller, resp.ControllerID) {
				t.Errorf("controller %d, want one of %v", resp.ControllerID, tc.controller)
			}
			if resp.ClusterAuthorizedOperations != notAsked {
				t.Errorf("authorized operations %d not asked for", resp.ClusterAuthorizedOperations)
			}
		})
	}
}

func TestDescribeClusterRefusesOtherEndpointTypes(t *testing.T) {
	img := testImage(t)
	for _, tc := range []struct {
		endpoint EndpointType
		want     *kerr.Error
	}{
		{EndpointControllers, kerr.MismatchedEndpointType},
		{7, kerr.UnsupportedEndpointType},
	} {
		resp := DescribeCluster(img, testCluster, 101, "PLAINTEXT", describeCluster(1, tc.endpoint, false))
		if resp.ErrorCode != tc.want.Code || resp.ErrorMessage == nil || len(resp.Brokers) != 0 {
			t.Errorf("endpoint %v: error %d %v brokers %v, want %s", tc.endpoint, resp.ErrorCode, resp.ErrorMessage, resp.Brokers, tc.want.Message)
		}
	}
	req := describeCluster(2, EndpointBrokers, false)
	req.IncludeClusterAuthorizedOperations = true
	if got := DescribeCluster(img, testCluster, 101, "PLAINTEXT", req); got.ClusterAuthorizedOperations != clusterOperations {
		t.Errorf("asked: operations %d", got.ClusterAuthorizedOperations)
	}
}
