package datasim

import (
	"time"
)

// scheduleFaults starts the seeded fault schedule: every few hundred
// milliseconds to few seconds one of a broker crash (restarted later), a
// cut link, an isolated broker, a slow link, or a leader move, until the
// quiet spell. At most two brokers are down at once.
func (s *Sim) scheduleFaults() {
	s.after(s.jitter(300*time.Millisecond, 2*time.Second), "fault", s.fault)
}

func (s *Sim) fault() {
	if s.quiet {
		return
	}
	defer s.scheduleFaults()
	switch n := s.rng.IntN(100); {
	case n < 25:
		s.crashOne()
	case n < 45:
		a, b := s.pickPair()
		s.cutFor(a, b, s.jitter(200*time.Millisecond, 4*time.Second))
	case n < 55:
		id := s.cfg.Brokers[s.rng.IntN(len(s.cfg.Brokers))]
		d := s.jitter(500*time.Millisecond, 4*time.Second)
		s.record("fault: broker %d isolated for %v", id, d)
		for _, other := range append([]int32{controllerID, producerID}, s.cfg.Brokers...) {
			if other != id {
				s.cutFor(id, other, d)
			}
		}
	case n < 75:
		a, b := s.pickPair()
		l, extra := linkOf(a, b), s.jitter(20*time.Millisecond, 700*time.Millisecond)
		d := s.jitter(500*time.Millisecond, 5*time.Second)
		s.record("fault: link %d-%d slow by up to %v for %v", a, b, 2*extra, d)
		s.own.net.slow[l] = extra
		s.after(d, "heal slow link", func() { delete(s.own.net.slow, l) })
	default:
		idx := s.pickPartition()
		s.record("fault: leader move of p%d", idx)
		s.model.moveLeader(idx)
	}
}

// pickPair is two distinct addresses among the brokers and the
// controller.
func (s *Sim) pickPair() (int32, int32) {
	nodes := append([]int32{controllerID}, s.cfg.Brokers...)
	i := s.rng.IntN(len(nodes))
	j := (i + 1 + s.rng.IntN(len(nodes)-1)) % len(nodes)
	return nodes[i], nodes[j]
}

// cutFor cuts the link between a and b for d.
func (s *Sim) cutFor(a, b int32, d time.Duration) {
	l := linkOf(a, b)
	if s.own.net.cut[l] {
		return
	}
	s.record("fault: link %d-%d cut for %v", a, b, d)
	s.own.net.cut[l] = true
	s.after(d, "heal link", func() { delete(s.own.net.cut, l) })
}

// crashOne crashes a running broker and restarts it later.
func (s *Sim) crashOne() {
	var up []int32
	for _, id := range s.cfg.Brokers {
		if s.brokers[id].up {
			up = append(up, id)
		}
	}
	if len(up) < 2 {
		return
	}
	id := up[s.rng.IntN(len(up))]
	b := s.brokers[id]
	b.crash()
	inc := b.incarnation
	s.after(s.jitter(200*time.Millisecond, 5*time.Second), "restart", func() {
		if !b.up && b.incarnation == inc {
			s.restart(b)
		}
	})
}

func (s *Sim) restart(b *broker) {
	if err := b.start(); err != nil {
		s.fail("restart broker %d: %v", b.id, err)
	}
}

// healAll ends the faults: every link whole and fast, every broker up.
func (s *Sim) healAll() {
	s.record("quiet: faults end")
	clear(s.own.net.cut)
	clear(s.own.net.slow)
	s.own.net.dropPerMille = 0
	for _, id := range s.cfg.Brokers {
		if b := s.brokers[id]; !b.up {
			s.restart(b)
		}
	}
}
