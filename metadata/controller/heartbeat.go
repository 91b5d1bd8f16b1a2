package controller

import (
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerHeartbeat is the soft state of one broker's session on the active
// controller (Kafka's BrokerHeartbeatTracker): it is not in the log, so a
// new active controller starts every session afresh at its activation.
type brokerHeartbeat struct {
	lastContact time.Time
	// metadataOffset is the offset the broker last said it applied, -1
	// before its first heartbeat to this controller.
	metadataOffset int64
	// registrationOffset is the offset of its RegisterBrokerRecord: known
	// exactly once this controller's record commits, else its broker epoch
	// (Kafka's epoch is that offset; see registration.go).
	registrationOffset int64
	// shutdownOffset is the offset of the record that began its controlled
	// shutdown, -1 if none.
	shutdownOffset int64
}

// brokerControlState is Kafka's BrokerControlState.
type brokerControlState int

const (
	stateFenced brokerControlState = iota
	stateUnfenced
	stateControlledShutdown
	stateShutdownNow
)

func (s brokerControlState) fenced() bool { return s == stateFenced || s == stateShutdownNow }

// resetHeartbeats starts a session, as of now, for every registered broker
// (Kafka's heartbeat manager registers each broker it replays with a fresh
// contact time).
func (c *QuorumController) resetHeartbeats(now time.Time) {
	c.st.heartbeats = map[int32]*brokerHeartbeat{}
	for _, id := range c.st.working.Cluster().BrokerIDs() {
		c.st.heartbeats[id] = c.freshSession(now, c.st.working.Cluster().Broker(id))
	}
}

// freshSession is the session of a broker this controller has not heard
// from: a broker already in controlled shutdown began it at or before the
// committed offset (the record that says so is in the image).
func (c *QuorumController) freshSession(now time.Time, b *image.BrokerRegistration) *brokerHeartbeat {
	hb := &brokerHeartbeat{lastContact: now, metadataOffset: -1, registrationOffset: b.Epoch, shutdownOffset: -1}
	if b.InControlledShutdown {
		hb.shutdownOffset = c.st.working.Provenance().LastContainedOffset
	}
	return hb
}

func (c *QuorumController) heartbeat(id int32, b *image.BrokerRegistration) *brokerHeartbeat {
	hb := c.st.heartbeats[id]
	if hb == nil {
		hb = c.freshSession(c.now(), b)
		c.st.heartbeats[id] = hb
	}
	return hb
}

// processBrokerHeartbeat is Kafka's ReplicationControlManager.processBrokerHeartbeat
// with BrokerHeartbeatManager.calculateNextBrokerState.
func (c *QuorumController) processBrokerHeartbeat(r *kmsg.BrokerHeartbeatRequest) outcome {
	resp := kmsg.NewPtrBrokerHeartbeatResponse()
	img := c.st.working
	b := img.Cluster().Broker(r.BrokerID)
	if b == nil || b.Epoch != r.BrokerEpoch {
		// Kafka's checkBrokerEpoch answers both with STALE_BROKER_EPOCH.
		resp.ErrorCode, resp.IsFenced = kerr.StaleBrokerEpoch.Code, true
		return outcome{resp: resp}
	}
	hb := c.heartbeat(r.BrokerID, b)
	current := stateUnfenced
	switch {
	case b.Fenced:
		current = stateFenced
	case b.InControlledShutdown:
		current = stateControlledShutdown
	}
	next := c.nextBrokerState(current, r, hb, img)
	now := c.now()
	hb.lastContact, hb.metadataOffset = now, r.CurrentMetadataOffset
	resp.IsCaughtUp = r.CurrentMetadataOffset >= hb.registrationOffset
	resp.IsFenced = next.fenced()
	resp.ShouldShutdown = next == stateShutdownNow
	o := outcome{resp: resp}
	if next == current {
		return o
	}
	id, epoch := r.BrokerID, b.Epoch
	switch next {
	case stateFenced, stateShutdownNow:
		if current == stateFenced {
			return o // already fenced: shutting down writes nothing
		}
		reason := fmt.Sprintf("broker %d asked to be fenced", id)
		if next == stateShutdownNow {
			reason = fmt.Sprintf("broker %d shut down", id)
		}
		o.records, o.events = c.fenceRecords(img, id, epoch, reason)
		o.events = append(o.events, Event{Kind: EventBrokerFenced, Broker: id, BrokerEpoch: epoch, Reason: reason})
	case stateUnfenced:
		ch := &record.BrokerRegistrationChangeRecord{Version: record.BrokerFencingChangeVersion, BrokerID: id, BrokerEpoch: epoch, Fenced: record.FencingUnfence}
		recs, evs := c.electLeaderless(img, id, fmt.Sprintf("broker %d unfenced", id))
		o.records = append([]record.Record{ch}, recs...)
		o.events = append([]Event{{Kind: EventBrokerUnfenced, Broker: id, BrokerEpoch: epoch,
			MetadataOffset: r.CurrentMetadataOffset, RegistrationOffset: hb.registrationOffset}}, evs...)
	case stateControlledShutdown:
		ch := &record.BrokerRegistrationChangeRecord{Version: record.BrokerShutdownChangeVersion, BrokerID: id, BrokerEpoch: epoch, InControlledShutdown: record.ControlledShutdownBegin}
		recs, evs := c.removeBrokerFromIsrs(img, id, fmt.Sprintf("broker %d in controlled shutdown", id))
		o.records = append([]record.Record{ch}, recs...)
		o.events = append([]Event{{Kind: EventBrokerControlledShutdown, Broker: id, BrokerEpoch: epoch}}, evs...)
		n := int64(len(o.records))
		o.onCommit = func(first int64) {
			if hb := c.st.heartbeats[id]; hb != nil {
				hb.shutdownOffset = first + n - 1
			}
		}
	}
	return o
}

// nextBrokerState is BrokerHeartbeatManager.calculateNextBrokerState.
func (c *QuorumController) nextBrokerState(current brokerControlState, r *kmsg.BrokerHeartbeatRequest, hb *brokerHeartbeat, img *image.MetadataImage) brokerControlState {
	switch current {
	case stateFenced:
		switch {
		case r.WantShutdown:
			return stateShutdownNow
		case !r.WantFence && r.CurrentMetadataOffset >= hb.registrationOffset:
			return stateUnfenced
		}
		return stateFenced
	case stateUnfenced:
		switch {
		case r.WantFence && r.WantShutdown:
			return stateShutdownNow
		case r.WantFence:
			return stateFenced
		case r.WantShutdown && leads(img, r.BrokerID):
			return stateControlledShutdown
		case r.WantShutdown:
			return stateShutdownNow
		}
		return stateUnfenced
	case stateControlledShutdown:
		if leads(img, r.BrokerID) || hb.shutdownOffset < 0 || hb.shutdownOffset > c.lowestActiveOffset() {
			// Not yet: its leaderships must move, and the brokers that
			// take them must have seen the records that moved them.
			return stateControlledShutdown
		}
		return stateShutdownNow
	}
	return current
}

// lowestActiveOffset is the lowest metadata offset an unfenced broker not in
// controlled shutdown last reported (Kafka's lowestActiveOffset).
func (c *QuorumController) lowestActiveOffset() int64 {
	lowest := int64(1<<63 - 1)
	for id, hb := range c.st.heartbeats {
		b := c.st.working.Cluster().Broker(id)
		if b == nil || b.Fenced || b.InControlledShutdown {
			continue
		}
		lowest = min(lowest, hb.metadataOffset)
	}
	return lowest
}

// fenceRecords is Kafka's handleBrokerFenced: the broker leaves every ISR
// and leadership, then a BrokerRegistrationChangeRecord fences it.
func (c *QuorumController) fenceRecords(img *image.MetadataImage, id int32, epoch int64, reason string) ([]record.Record, []Event) {
	recs, evs := c.removeBrokerFromIsrs(img, id, reason)
	recs = append(recs, &record.BrokerRegistrationChangeRecord{Version: record.BrokerFencingChangeVersion, BrokerID: id, BrokerEpoch: epoch, Fenced: record.FencingFence})
	return recs, evs
}
