package metasim

import "time"

// The faults of the quorum underneath, named in the transcript too (the
// quorum's trace already hashes them).

// Kill stops a node at once, as a crash.
func (s *Sim) Kill(id int32) {
	s.say("kill node %d", id)
	s.stopping(id, true)
	s.rc.Kill(id)
}

// Restart starts a stopped node again, as a new incarnation.
func (s *Sim) Restart(id int32) { s.say("restart node %d", id); s.rc.Restart(id) }

// Shutdown stops a node gracefully.
func (s *Sim) Shutdown(id int32) {
	s.say("shut down node %d", id)
	s.stopping(id, false)
	s.rc.Shutdown(id)
}

// stopping tells the data plane that a running broker stops.
func (s *Sim) stopping(id int32, crashed bool) {
	if s.dp != nil && id >= firstBroker && s.rc.Node(id) != nil {
		s.dp.BrokerStopped(id, crashed)
	}
}

// Resign makes a quorum leader resign its epoch.
func (s *Sim) Resign(id int32) { s.say("node %d resigns", id); s.rc.Resign(id) }

// Isolate cuts every link of a node.
func (s *Sim) Isolate(id int32) { s.say("isolate node %d", id); s.rc.Isolate(id) }

// Partition cuts the links between two groups.
func (s *Sim) Partition(a, b []int32) { s.say("partition %v | %v", a, b); s.rc.Partition(a, b) }

// Heal restores every link.
func (s *Sim) Heal() { s.say("heal"); s.rc.Heal() }

// Degrade makes every link lossy and slow.
func (s *Sim) Degrade(drop float64, maxDelay time.Duration) {
	s.say("degrade: drop %.2f, delay up to %v", drop, maxDelay)
	s.rc.Degrade(drop, maxDelay)
}
