package datasim

// What a simulation that places a data plane (NewDataPlane) drives it
// with, besides Start, Stop, SetBrokerEpoch and Apply.

// Check runs the invariants, as Run does after every event, and returns
// the first broken.
func (s *Sim) Check() error {
	if s.err == nil {
		s.check()
	}
	return s.err
}

// check runs the invariants.
func (s *Sim) check() { s.inv.check() }

// Quiet stops the producer: the faults are over, and what remains is to
// catch up.
func (s *Sim) Quiet() { s.quiet = true }

// Settled reports whether every partition has a leader and every broker
// in its ISR, as the controller decided.
func (s *Sim) Settled() bool {
	for idx := range s.cfg.Partitions {
		if r := s.ctrl.Partition(idx); r.Leader < 0 || len(r.ISR) != len(s.cfg.Brokers) {
			return false
		}
	}
	return true
}

// Final checks the end of the quiet spell: every partition led, every
// broker in every ISR holding every acknowledged batch.
func (s *Sim) Final() error {
	if s.err == nil {
		s.final()
	}
	return s.err
}

func (s *Sim) final() { s.inv.final() }
