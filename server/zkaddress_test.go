package server

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A playground member is reached at its address in the group's book; a
// broker outside the playground at the PLAINTEXT endpoint the controller
// read from its registration, or else the one UpdateMetadata listed.
func TestZkAddressesPreferMembersThenRegistrations(t *testing.T) {
	meta := newZkMetadata(1, func(*image.MetadataDelta, *image.MetadataImage) {})
	meta.setBrokerEpoch(10)
	a := newZkAddresses(func(id int32) (string, bool) {
		if id == 1 {
			return "127.0.0.1:9001", true
		}
		return "", false
	}, meta)
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = 1, 1, -1
	for _, id := range []int32{1, 300} {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		for _, l := range []string{"CLIENT", "PLAINTEXT"} {
			e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			e.ListenerName, e.Host, e.Port = l, "127.0.0.1", 7000+id
			if l == "CLIENT" {
				e.Port++
			}
			lb.Endpoints = append(lb.Endpoints, e)
		}
		um.LiveBrokers = append(um.LiveBrokers, lb)
	}
	if resp := meta.updateMetadata(um); resp.ErrorCode != 0 {
		t.Fatalf("UpdateMetadata: error %d", resp.ErrorCode)
	}
	a.register(200, "127.0.0.1", 9200)
	for _, c := range []struct {
		id   int32
		want string
	}{{1, "127.0.0.1:9001"}, {200, "127.0.0.1:9200"}, {300, "127.0.0.1:7300"}, {400, ""}} {
		got, ok := a.address(c.id)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("address(%d) = %q, %v; want %q", c.id, got, ok, c.want)
		}
	}
}
