package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/wire"
)

// TestHostileConnectionSlots: more idle connections to the active
// controller than its max.connections. The review saw a restarting broker
// fail to register for 20 s: its connections waited behind the idle ones
// for a free slot. Members of the playground now always get one: a
// connection over the limit that authenticates as a member closes the
// least recently used connection of a stranger, as Kafka's inter-broker
// listener does.
func TestHostileConnectionSlots(t *testing.T) {
	ht := openHostile(t)
	v := ht.p.View()
	leader, _ := v.Leader()
	idle := wire.DefaultMaxConnections + 76
	for range idle {
		dialHostile(t, leader.Listener)
	}
	broker := ht.p.Config().BrokerIDs()[0]
	act(t, ht.p, fmt.Sprintf("stop %d", broker))
	waitCond(t, ht.p, fmt.Sprintf("fenced %d", broker))
	start := time.Now()
	act(t, ht.p, fmt.Sprintf("start %d", broker))
	waitCondWithin(t, ht.p, fmt.Sprintf("unfenced %d", broker), hostileRecovery)
	t.Logf("broker %d registered and unfenced %v after its start, with %d idle connections to the active controller",
		broker, time.Since(start).Round(time.Millisecond), idle)
	ht.checkServing(t, "with the idle connections still open")
}
