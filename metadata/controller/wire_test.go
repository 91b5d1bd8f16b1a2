package controller

import (
	"context"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestServesItsAPIsOnAWireServer drives the controller through a real
// listener: ApiVersions lists its APIs, topic APIs are open to anyone, and
// the broker APIs are for members only.
func TestServesItsAPIsOnAWireServer(t *testing.T) {
	h, _ := cluster(t, 1, Config{})
	mux := wire.NewMux()
	if err := h.ctl.Register(mux); err != nil {
		t.Fatal(err)
	}
	s, err := wire.Listen(wire.ServerConfig{NodeID: 1, APIs: mux.APIs(), Handler: mux, Secret: "playground-secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := wire.NewClient(wire.ClientConfig{From: -1, To: 1, Addr: s.Addr(), ClientID: "a-users-tool"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	av, err := c.Do(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	served := map[int16]bool{}
	for _, k := range av.(*kmsg.ApiVersionsResponse).ApiKeys {
		served[k.ApiKey] = true
	}
	for _, api := range APIs {
		if !served[api.Key] {
			t.Fatalf("ApiVersions does not list %s", kmsg.NameForKey(api.Key))
		}
	}

	resp, err := c.Do(ctx, createTopic("over-the-wire", 3, 1))
	if err != nil {
		t.Fatal(err)
	}
	if rt := resp.(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 || rt.NumPartitions != 3 {
		t.Fatalf("create over the wire: %+v", rt)
	}
	if h.image().Topics().TopicByName("over-the-wire") == nil {
		t.Fatal("topic not committed")
	}

	resp, err = c.Do(ctx, registration(150))
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.BrokerRegistrationResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("anonymous registration: error %d, want CLUSTER_AUTHORIZATION_FAILED", code)
	}

	// After Close the listener's requests hear NOT_CONTROLLER.
	h.ctl.Close()
	resp, err = c.Do(ctx, createTopic("late", 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if rt := resp.(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != kerr.NotController.Code {
		t.Fatalf("after close: error %d, want NOT_CONTROLLER", rt.ErrorCode)
	}
}
