package metasim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/raft/raftsim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// WorkloadOptions tunes Run.
type WorkloadOptions struct {
	// Faults is how many faults the chaos phase injects.
	Faults int
	// TraceLines keeps the trace's and the transcript's tails for error
	// messages.
	TraceLines int
}

// topicNames is the pool the workload creates and deletes from, so that
// names are reused after deletes.
var topicNames = []string{"orders", "payments", "clicks", "audit", "events", "logs"}

// Run runs one seed of the randomized workload: a cluster of 3
// controllers and 1-3 brokers starts, two clients create, grow and delete
// topics and partition leaders alter their ISRs while brokers and
// controllers are killed, restarted, shut down and cut off, snapshots are
// taken and leaders resign; then everything heals, and the cluster must
// have an active controller, every broker registered and unfenced, and a
// topic created on all of them. The invariants are checked after every
// event.
func Run(seed uint64, wo WorkloadOptions) (*Sim, error) {
	r := rand.New(rand.NewPCG(seed, 0x6d657461))
	opts := Options{
		Seed:                   seed,
		Brokers:                1 + r.IntN(3),
		Replication:            []raft.Replication{raft.Pull, raft.Push}[r.IntN(2)],
		EligibleLeaderReplicas: r.IntN(2) == 0,
		UncleanLeaderElection:  r.IntN(3) == 0,
		AutoLeaderRebalance:    r.IntN(2) == 0,
		// A session outlives a lost request's timeout and two heartbeats,
		// as Kafka's defaults (9s, 2s) do.
		SessionTimeout:    time.Duration(3000+r.IntN(3000)) * time.Millisecond,
		HeartbeatInterval: time.Duration(200+r.IntN(600)) * time.Millisecond,
		TraceLines:        wo.TraceLines,
	}
	s, err := New(opts)
	if err != nil {
		return s, err
	}
	s.record("metasim: %d brokers, %v, elr %v, unclean %v, rebalance %v, session %v, heartbeat %v", opts.Brokers, opts.Replication,
		opts.EligibleLeaderReplicas, opts.UncleanLeaderElection, opts.AutoLeaderRebalance, opts.SessionTimeout, opts.HeartbeatInterval)
	s.StartWorkload(r)
	if err := s.RunFor(5 * time.Second); err != nil {
		return s, err
	}
	for range wo.Faults {
		s.RandomFault(r)
		if err := s.RunFor(time.Duration(500+r.IntN(4500)) * time.Millisecond); err != nil {
			return s, err
		}
	}
	s.StopWorkload()
	return s, s.HealAndSettle(60 * time.Second)
}

// StartWorkload has the clients create, grow and delete topics of a pool
// of names, drawing from r.
func (s *Sim) StartWorkload(r *rand.Rand) {
	for _, c := range s.clients {
		s.workload(r, c)
	}
}

// StopWorkload ends the clients' requests.
func (s *Sim) StopWorkload() { s.workloadOff = true }

// workload makes a client create, grow or delete a topic every 0.2-2s.
func (s *Sim) workload(r *rand.Rand, c *client) {
	s.rc.After(time.Duration(200+r.IntN(1800))*time.Millisecond, func() {
		if s.workloadOff {
			return
		}
		if !c.busy() {
			name := topicNames[r.IntN(len(topicNames))]
			switch x := r.IntN(6); {
			case x < 2:
				c.deleteTopic(name, nil)
			case x == 2:
				c.createPartitions(name, int32(2+r.IntN(4)), nil)
			default:
				c.createTopic(name, int32(1+r.IntN(3)), int16(1+r.IntN(s.opts.Brokers)), nil)
			}
		}
		s.workload(r, c)
	})
}

// HealAndSettle heals the network, restarts every stopped node and runs
// until a controller is active, every broker is registered and unfenced in
// the committed image, and a new topic is created and acknowledged.
func (s *Sim) HealAndSettle(limit time.Duration) error {
	s.Heal()
	s.restartStopped()
	settled := func() bool {
		if _, _, ok := s.ActiveController(); !ok {
			return false
		}
		// Every broker's running incarnation is registered and unfenced
		// in the committed log.
		for i := range s.opts.Brokers {
			id := firstBroker + int32(i)
			b, reg := s.brokers[id], s.ref.img.Cluster().Broker(id)
			if b == nil || !b.m.alive() || b.stopping || reg == nil || reg.Fenced || reg.InControlledShutdown || reg.Epoch != b.epoch {
				return false
			}
		}
		for _, c := range s.clients {
			if c.busy() {
				return false
			}
		}
		return true
	}
	if err := s.RunUntil(settled, limit); err != nil {
		return s.liveness(err)
	}
	code := int16(-2)
	s.client.createTopic("final", 1, int16(s.opts.Brokers), func(c int16) { code = c })
	if err := s.RunUntil(func() bool { return code != -2 }, limit); err != nil {
		return s.liveness(err)
	}
	// A retry after a lost answer finds the topic there.
	if code == noAnswer {
		return s.liveness(fmt.Errorf("final CreateTopics: no controller answered in %v", giveUp))
	}
	if code != 0 && code != kerr.TopicAlreadyExists.Code {
		return s.liveness(fmt.Errorf("final CreateTopics answered %v", kerr.ErrorForCode(code)))
	}
	if t := s.ref.img.Topics().TopicByName("final"); t == nil {
		return fmt.Errorf("final topic acknowledged but not committed")
	}
	return nil
}

// restartStopped restarts every stopped node, now and every second after:
// a graceful shutdown or a broker's controlled shutdown begun before the
// healing ends after it.
func (s *Sim) restartStopped() {
	for _, id := range s.rc.IDs() {
		if !s.rc.Running(id) {
			s.Restart(id)
		}
	}
	s.rc.After(time.Second, s.restartStopped)
}

func (s *Sim) liveness(err error) error {
	if s.rc.Err() != nil {
		return err
	}
	return fmt.Errorf("liveness after healing: %w; %s", err, s.rc.Describe())
}

// RandomFault injects one fault, chosen by weight with r: kills, restarts
// and shutdowns of brokers and controllers, cut nodes and partitions,
// healing, snapshots, resignations and lossy, slow links.
func (s *Sim) RandomFault(r *rand.Rand) {
	rc := s.rc
	active, _, hasActive := s.ActiveController()
	brokers := func(running bool) []int32 {
		var out []int32
		for i := range s.opts.Brokers {
			id := firstBroker + int32(i)
			if rc.Running(id) == running {
				out = append(out, id)
			}
		}
		return out
	}
	ctls := func(running bool) []int32 {
		var out []int32
		for id := int32(1); id <= controllers; id++ {
			if rc.Running(id) == running {
				out = append(out, id)
			}
		}
		return out
	}
	pick := func(ids []int32) (int32, bool) {
		if len(ids) == 0 {
			return 0, false
		}
		return ids[r.IntN(len(ids))], true
	}
	all := append(rc.IDs(), clientIDs()...)
	faults := []raftsim.Weighted{
		{Weight: 10, Apply: func() {
			if id, ok := pick(brokers(true)); ok {
				s.Kill(id)
			}
		}},
		{Weight: 10, Apply: func() {
			if id, ok := pick(brokers(false)); ok {
				s.Restart(id)
			}
		}},
		{Weight: 8, Apply: func() {
			if hasActive {
				s.Kill(active)
			}
		}},
		{Weight: 4, Apply: func() {
			if id, ok := pick(ctls(true)); ok {
				s.Kill(id)
			}
		}},
		{Weight: 12, Apply: func() {
			if id, ok := pick(ctls(false)); ok {
				s.Restart(id)
			}
		}},
		{Weight: 5, Apply: func() {
			if hasActive {
				s.Isolate(active)
			}
		}},
		{Weight: 5, Apply: func() {
			if id, ok := pick(all); ok {
				s.Isolate(id)
			}
		}},
		{Weight: 5, Apply: func() {
			ids := append([]int32(nil), all...)
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			k := 1 + r.IntN(len(ids)-1)
			s.Partition(ids[:k], ids[k:])
		}},
		{Weight: 12, Apply: s.Heal},
		{Weight: 6, Apply: func() {
			if id, ok := pick(append(ctls(true), brokers(true)...)); ok {
				s.Snapshot(id)
			}
		}},
		{Weight: 3, Apply: func() {
			if hasActive {
				s.Resign(active)
			}
		}},
		{Weight: 3, Apply: func() {
			if id, ok := pick(ctls(true)); ok {
				s.Shutdown(id)
			}
		}},
		{Weight: 5, Apply: func() {
			if id, ok := pick(brokers(true)); ok {
				if b := s.brokers[id]; b != nil {
					b.controlledShutdown()
				}
			}
		}},
		{Weight: 4, Apply: func() { s.Degrade(r.Float64()*0.1, time.Duration(r.IntN(30))*time.Millisecond) }},
	}
	raftsim.ApplyWeighted(r, faults)
}
