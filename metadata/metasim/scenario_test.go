package metasim

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// settle starts a cluster and waits for an active controller with every
// broker registered and unfenced.
func settle(t *testing.T, seed uint64) *Sim {
	t.Helper()
	s, err := New(Options{Seed: seed, Brokers: 3, TraceLines: 200, Transcript: true})
	if err != nil {
		t.Fatal(err)
	}
	err = s.RunUntil(func() bool {
		if _, _, ok := s.ActiveController(); !ok {
			return false
		}
		for i := range s.opts.Brokers {
			if b := s.ref.img.Cluster().Broker(firstBroker + int32(i)); b == nil || b.Fenced {
				return false
			}
		}
		return true
	}, 20*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(s.Transcript(), "\n"))
	}
	return s
}

// A controller is killed while a CreateTopics waits for its records to
// commit: they never reach a majority, so they are lost with it, and the
// client is not answered. It tries the next controller; the successor,
// active in a later epoch, creates the topic and answers; the committed
// log holds the topic once.
func TestScenarioControllerKilledWhileCreateTopicsWaits(t *testing.T) {
	s := settle(t, 1)
	rc := s.Cluster()
	active, epoch, _ := s.ActiveController()
	s.client.target = active

	// The active controller is cut from the other voters and the
	// brokers, but the client still reaches it.
	var others []int32
	for _, id := range rc.IDs() {
		if id != active {
			others = append(others, id)
		}
	}
	s.Partition([]int32{active}, others)

	code := int16(-2)
	s.client.createTopic("orders", 3, 2, func(c int16) { code = c })
	if err := s.RunFor(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if code != -2 {
		t.Fatalf("CreateTopics answered %v before its records could commit", kerr.ErrorForCode(code))
	}
	if n := s.ref.topicRecords["orders"]; n != 0 {
		t.Fatalf("orders committed %d times with its controller cut off", n)
	}

	s.Kill(active)
	s.Heal()
	if err := s.RunUntil(func() bool { return code != -2 }, 30*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(s.Transcript(), "\n"))
	}
	if code != 0 {
		t.Fatalf("CreateTopics answered %v\n%s", kerr.ErrorForCode(code), strings.Join(s.Transcript(), "\n"))
	}
	successor, newEpoch, ok := s.ActiveController()
	if !ok || successor == active || newEpoch <= epoch {
		t.Fatalf("active controller %d in epoch %d (ok %v) after %d in epoch %d", successor, newEpoch, ok, active, epoch)
	}

	// The killed controller comes back and catches up: the topic is
	// there once, everywhere.
	s.Restart(active)
	err := s.RunUntil(func() bool {
		for _, id := range rc.IDs() {
			img := s.Image(id)
			if img == nil || img.Topics().TopicByName("orders") == nil {
				return false
			}
		}
		return true
	}, 30*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(s.Transcript(), "\n"))
	}
	if n := s.ref.topicRecords["orders"]; n != 1 {
		t.Fatalf("the committed log creates orders %d times", n)
	}
	t.Logf("transcript:\n%s", strings.Join(s.Transcript(), "\n"))
}

// A broker killed stops heartbeating: once its session times out the
// active controller fences it and moves its leaderships; restarted, it
// registers a new incarnation and is unfenced once caught up.
func TestScenarioBrokerKilledIsFencedThenReturns(t *testing.T) {
	s := settle(t, 2)
	rc := s.Cluster()
	code := int16(-2)
	s.client.createTopic("clicks", 3, 3, func(c int16) { code = c })
	if err := s.RunUntil(func() bool { return code != -2 }, 20*time.Second); err != nil || code != 0 {
		t.Fatalf("create clicks: %v %v", err, kerr.ErrorForCode(code))
	}
	victim := firstBroker + 1
	s.Kill(victim)
	killed := rc.Now()
	fenced := func() bool { b := s.ref.img.Cluster().Broker(victim); return b != nil && b.Fenced }
	if err := s.RunUntil(fenced, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := rc.Now().Sub(killed); took < s.opts.SessionTimeout {
		t.Fatalf("broker %d fenced %v after its last heartbeat could have been sent, before the session timeout %v", victim, took, s.opts.SessionTimeout)
	}
	t1 := s.ref.img.Topics().TopicByName("clicks")
	for p, reg := range t1.Partitions() {
		if reg.Leader == victim || reg.InIsr(victim) {
			t.Fatalf("clicks-%d still has fenced broker %d: leader %d isr %v", p, victim, reg.Leader, reg.Isr)
		}
	}
	s.Restart(victim)
	err := s.RunUntil(func() bool {
		b, reg := s.brokers[victim], s.ref.img.Cluster().Broker(victim)
		return b.m.alive() && reg != nil && !reg.Fenced && reg.Epoch == b.epoch
	}, 30*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(s.Transcript(), "\n"))
	}
	t.Logf("transcript:\n%s", strings.Join(s.Transcript(), "\n"))
}
