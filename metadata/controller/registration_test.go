package controller

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBrokersRegisterFencedAndUnfenceOnceCaughtUp(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.lead(1)
	epochs := map[int32]int64{}
	for _, id := range []int32{101, 102, 103} {
		epochs[id] = h.register(id)
	}
	img := h.image()
	for id, e := range epochs {
		b := img.Cluster().Broker(id)
		if b == nil || !b.Fenced || b.Epoch != e {
			t.Fatalf("broker %d after registration: %+v, want fenced at epoch %d", id, b, e)
		}
		if len(b.Directories) != 1 || b.Directories[0] != record.Uuid(logDir(id)) {
			t.Fatalf("broker %d directories %v", id, b.Directories)
		}
	}
	if epochs[101] >= epochs[102] || epochs[102] >= epochs[103] {
		t.Fatalf("broker epochs %v do not grow with the log", epochs)
	}
	if m := h.ctl.Metrics(); m.FencedBrokerCount != 3 || m.ActiveBrokerCount != 0 {
		t.Fatalf("metrics %+v, want 3 fenced", m)
	}

	// Behind its own registration: not caught up, still fenced.
	resp := h.do(heartbeat(103, epochs[103], epochs[103]-1)).(*kmsg.BrokerHeartbeatResponse)
	if resp.ErrorCode != 0 || resp.IsCaughtUp || !resp.IsFenced {
		t.Fatalf("heartbeat behind the registration: %+v", resp)
	}
	for id, e := range epochs {
		resp := h.heartbeatCaughtUp(id, e)
		if resp.ErrorCode != 0 || !resp.IsCaughtUp || resp.IsFenced || resp.ShouldShutdown {
			t.Fatalf("broker %d caught up: %+v", id, resp)
		}
	}
	img = h.image()
	for id := range epochs {
		if img.Cluster().Broker(id).Fenced {
			t.Fatalf("broker %d still fenced in the committed image", id)
		}
	}
	unfence := 0
	for _, r := range h.records() {
		if c, ok := r.(*record.BrokerRegistrationChangeRecord); ok && c.Fenced == record.FencingUnfence && c.Version == 0 {
			unfence++
		}
	}
	if unfence != 3 {
		t.Fatalf("%d unfence records (BrokerRegistrationChangeRecord v0), want 3", unfence)
	}
	if m := h.ctl.Metrics(); m.FencedBrokerCount != 0 || m.ActiveBrokerCount != 3 {
		t.Fatalf("metrics %+v, want 3 active", m)
	}
	if n := len(h.eventsOf(EventBrokerUnfenced)); n != 3 {
		t.Fatalf("%d unfenced events", n)
	}
	for _, b := range h.ctl.Brokers() {
		if b.Fenced || !b.CaughtUp || b.LastHeartbeat.IsZero() {
			t.Fatalf("broker view %+v", b)
		}
	}
}

func TestReRegistrationOfTheSameIncarnationKeepsEpochAndState(t *testing.T) {
	h, epochs := cluster(t, 1, Config{})
	again := h.register(101)
	if again != epochs[101] {
		t.Fatalf("same incarnation got epoch %d, had %d", again, epochs[101])
	}
	if h.image().Cluster().Broker(101).Fenced {
		t.Fatal("re-registration fenced the broker")
	}
}

func TestNewIncarnationWithALiveSessionIsADuplicate(t *testing.T) {
	h, _ := cluster(t, 1, Config{})
	r := registration(101)
	r.IncarnationID = incarnation(101, 1)
	resp := h.do(r).(*kmsg.BrokerRegistrationResponse)
	if resp.ErrorCode != kerr.DuplicateBrokerRegistration.Code {
		t.Fatalf("error %d, want DUPLICATE_BROKER_REGISTRATION", resp.ErrorCode)
	}
	// Once the session expires, the new incarnation registers with a
	// higher epoch and starts fenced.
	h.tick(DefaultSessionTimeout + 2*h.ctl.tickEvery)
	resp = h.do(r).(*kmsg.BrokerRegistrationResponse)
	if resp.ErrorCode != 0 || !h.image().Cluster().Broker(101).Fenced {
		t.Fatalf("new incarnation after the session: %+v", resp)
	}
}

func TestRegistrationErrors(t *testing.T) {
	h, _ := cluster(t, 1, Config{})
	for _, tc := range []struct {
		name   string
		change func(*kmsg.BrokerRegistrationRequest)
		want   *kerr.Error
	}{
		{"another cluster", func(r *kmsg.BrokerRegistrationRequest) { r.ClusterID = "other" }, kerr.InconsistentClusterID},
		{"negative id", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID = -5 }, kerr.InvalidRegistration},
		{"zk broker", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID, r.IsMigratingZkBroker = 150, true }, kerr.BrokerIDNotRegistered},
		{"no log dirs", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID, r.LogDirs = 150, nil }, kerr.InvalidRegistration},
		{"reserved log dir", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID, r.LogDirs = 150, [][16]byte{record.DirectoryLost} }, kerr.InvalidRegistration},
		{"duplicate log dir", func(r *kmsg.BrokerRegistrationRequest) {
			r.BrokerID, r.LogDirs = 150, [][16]byte{logDir(150), logDir(150)}
		}, kerr.InvalidRegistration},
		{"another broker's log dir", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID, r.LogDirs = 150, [][16]byte{logDir(101)} }, kerr.InvalidRegistration},
		{"no metadata.version", func(r *kmsg.BrokerRegistrationRequest) {
			r.BrokerID, r.LogDirs, r.Features = 150, [][16]byte{logDir(150)}, nil
		}, kerr.InvalidRegistration},
		{"metadata.version too new for the broker", func(r *kmsg.BrokerRegistrationRequest) {
			r.BrokerID, r.LogDirs = 150, [][16]byte{logDir(150)}
			r.Features[0].MaxSupportedVersion = 20
		}, kerr.UnsupportedVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := registration(101)
			tc.change(r)
			resp := h.do(r).(*kmsg.BrokerRegistrationResponse)
			if resp.ErrorCode != tc.want.Code {
				t.Fatalf("error %d, want %s", resp.ErrorCode, tc.want.Message)
			}
		})
	}
	if n := h.image().Cluster().Len(); n != 1 {
		t.Fatalf("%d brokers registered after refusals, want 1", n)
	}
}

func TestHeartbeatErrors(t *testing.T) {
	h, epochs := cluster(t, 1, Config{})
	for _, tc := range []struct {
		name string
		req  *kmsg.BrokerHeartbeatRequest
	}{
		{"unknown broker", heartbeat(999, 5, 100)},
		{"stale epoch", heartbeat(101, epochs[101]-1, 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.do(tc.req).(*kmsg.BrokerHeartbeatResponse)
			if resp.ErrorCode != kerr.StaleBrokerEpoch.Code || !resp.IsFenced {
				t.Fatalf("%+v, want STALE_BROKER_EPOCH", resp)
			}
		})
	}
}

func TestWantFenceFencesAnUnfencedBroker(t *testing.T) {
	h, epochs := cluster(t, 2, Config{})
	h.createTopic("t", 2, 2)
	r := heartbeat(101, epochs[101], h.image().Provenance().LastContainedOffset)
	r.WantFence = true
	resp := h.do(r).(*kmsg.BrokerHeartbeatResponse)
	if !resp.IsFenced || resp.ShouldShutdown {
		t.Fatalf("%+v, want fenced", resp)
	}
	img := h.image()
	if !img.Cluster().Broker(101).Fenced {
		t.Fatal("not fenced in the image")
	}
	for _, p := range img.Topics().TopicByName("t").Partitions() {
		if p.InIsr(101) || p.Leader == 101 {
			t.Fatalf("fenced broker still in a partition: %+v", p)
		}
	}
}
