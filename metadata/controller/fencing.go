package controller

import (
	"fmt"
	"time"
)

// maybeFenceStaleBroker fences at most one broker whose session expired,
// the one heard from longest ago (Kafka's maybeFenceOneStaleBroker, run
// every session timeout / 8): it leaves every ISR, its leaderships move to
// unfenced ISR members, then it is fenced.
func (c *QuorumController) maybeFenceStaleBroker(now time.Time) {
	img := c.st.working
	var stale int32 = -1
	var oldest time.Time
	for _, id := range img.Cluster().BrokerIDs() {
		b := img.Cluster().Broker(id)
		if b.Fenced {
			continue // only unfenced brokers have sessions to lose
		}
		hb := c.heartbeat(id, b)
		if !hb.lastContact.Add(c.cfg.SessionTimeout).Before(now) {
			continue
		}
		if stale < 0 || hb.lastContact.Before(oldest) {
			stale, oldest = id, hb.lastContact
		}
	}
	if stale < 0 {
		return
	}
	b := img.Cluster().Broker(stale)
	reason := fmt.Sprintf("broker %d's session timed out", stale)
	c.log.Info("fencing broker because its session has timed out", "broker", stale, "epoch", b.Epoch,
		"last_contact", oldest, "session_timeout", c.cfg.SessionTimeout)
	recs, evs := c.fenceRecords(img, stale, b.Epoch, reason)
	evs = append(evs, Event{Kind: EventBrokerSessionTimedOut, Broker: stale, BrokerEpoch: b.Epoch, Reason: reason})
	err := c.write(recs, evs, func(ok bool, _ int64) {
		if ok {
			c.st.timedOut++
		}
	})
	if err != nil {
		c.log.Error("cannot fence a stale broker", "broker", stale, "err", err)
	}
}
