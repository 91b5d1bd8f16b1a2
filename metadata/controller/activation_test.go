package controller

import (
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestActivationOnEmptyImageWritesMetadataVersion(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	if _, ok := h.ctl.Active(); ok {
		t.Fatal("active before any leader change")
	}
	h.lead(3)
	h.sync()
	recs := h.records()
	if len(recs) != 1 {
		t.Fatalf("activation wrote %d records, want 1: %v", len(recs), recs)
	}
	f, ok := recs[0].(*record.FeatureLevelRecord)
	if !ok || f.Name != record.MetadataVersionFeature || f.FeatureLevel != record.MetadataVersion4_4IV2 {
		t.Fatalf("activation wrote %#v, want metadata.version %d", recs[0], record.MetadataVersion4_4IV2)
	}
	if mv, ok := h.image().Features().MetadataVersion(); !ok || mv != record.MetadataVersion4_4IV2 {
		t.Fatalf("committed metadata.version %d %v", mv, ok)
	}
	if e, ok := h.ctl.Active(); !ok || e != 3 {
		t.Fatalf("Active() = %d, %v; want 3, true", e, ok)
	}
	poll.Until(t, 10*time.Second, "an activated event", func() bool { return len(h.eventsOf(EventActivated)) == 1 })
	if evs := h.eventsOf(EventActivated); evs[0].Epoch != 3 {
		t.Fatalf("activated events %+v", evs)
	}
	poll.Until(t, 10*time.Second, "metrics after activation", func() bool {
		m := h.ctl.Metrics()
		return m.ActiveControllerCount == 1 && m.LastAppliedRecordOffset == 0 && m.LastCommittedRecordOffset == 0
	})
}

func TestActivationOnNonEmptyImageWritesNothingAndIsReadyAtOnce(t *testing.T) {
	mv := &record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: record.MetadataVersion4_4IV2}
	h := newHarness(t, harnessOpts{bootstrap: []record.Record{mv}})
	h.lead(2)
	if n := len(h.records()); n != 1 {
		t.Fatalf("activation on a bootstrapped log wrote %d records", n-1)
	}
	evs := h.eventsOf(EventActivated)
	if len(evs) != 1 || evs[0].Took != 0 {
		t.Fatalf("activated events %+v, want one that took no (fake) time", evs)
	}
}

func TestLeaderChangeToAnotherNodeDeactivates(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.lead(1)
	h.follow(2, 2)
	if _, ok := h.ctl.Active(); ok {
		t.Fatal("still active after another node leads")
	}
	if h.ctl.Metrics().ActiveControllerCount != 0 {
		t.Fatal("ActiveControllerCount still 1")
	}
	if len(h.eventsOf(EventDeactivated)) != 1 {
		t.Fatal("no deactivated event")
	}
	resp := h.do(registration(101)).(*kmsg.BrokerRegistrationResponse)
	if resp.ErrorCode != kerr.NotController.Code {
		t.Fatalf("registration with an inactive controller: error %d, want NOT_CONTROLLER", resp.ErrorCode)
	}
}
