package server

import (
	"context"
	"sync"
	"time"

	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/storage"
)

// A node whose raft client stops on a disk fault (its metadata log, a
// snapshot or its quorum-state file could not be written: a full disk)
// goes down whole, as a Kafka process halts when its metadata log dir
// fails. Kafka leaves starting it again to the operator or a supervisor
// (systemd, Kubernetes); a kraftlab node is its own supervisor: it probes
// its metadata folder with a write (storage.ProbeWrite) after a backoff,
// and once the folder takes one, starts again from it, as a restarted
// process recovers its log. A start, stop or kill by hand ends the
// supervision; a start that fails on something other than the disk ends
// it too, and the node stays failed saying why.

// maxRestartBackoff caps the pause between two probes: the default of
// Kafka's reconnect.backoff.max.ms, the longest a Kafka client waits
// before it tries a peer that is down again.
const maxRestartBackoff = time.Second

// RestartStatus is what a node's own restarts are doing.
type RestartStatus struct {
	// Since is when the node stopped on the fault.
	Since time.Time
	// Attempts counts the probes (and starts) that have failed so far.
	Attempts int
	// Next is when the next probe is due.
	Next time.Time
	// LastError is why the last attempt did not start the node, led by
	// the kind of disk trouble ("disk full: ..."); empty before the first.
	LastError string
}

// restarter is one supervision: a goroutine that probes and starts.
type restarter struct {
	stop chan struct{} // closed to end it
	done chan struct{} // closed when its goroutine returns

	mu     sync.Mutex
	status RestartStatus
}

func (r *restarter) set(f func(*RestartStatus)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.status)
}

// Restarting reports what the node's own restarts are doing, if it
// stopped on a disk fault and has not started again yet.
func (s *Server) Restarting() (RestartStatus, bool) {
	s.mu.Lock()
	r := s.restart
	s.mu.Unlock()
	if r == nil {
		return RestartStatus{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, true
}

// maybeRestart starts the supervision of a node whose raft client just
// ended, if it failed on a disk fault and nobody stopped it by hand. An
// incarnation that lived less than maxRestartBackoff continues the
// backoff of the restart that made it, so that a disk with a few bytes
// free does not make the node flap at the first backoff's pace.
func (s *Server) maybeRestart(started time.Time) {
	st := s.raft.Status()
	if st.State != quorum.StateFailed || st.Fault == storage.NoFault {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down || s.restart != nil {
		return
	}
	if s.cfg.Clock.Since(started) < maxRestartBackoff {
		s.streak++
	} else {
		s.streak = 0
	}
	now := s.cfg.Clock.Now()
	r := &restarter{stop: make(chan struct{}), done: make(chan struct{}), status: RestartStatus{Since: now}}
	s.restart = r
	s.log.Warn("the node stopped on a disk fault; it starts again once its folder takes writes", "err", st.Err)
	go s.supervise(r, s.restartBackoff(s.streak))
}

// restartBackoff is the pause before the attempt after n quick ones:
// controller.quorum.retry.backoff.ms, doubling up to maxRestartBackoff.
func (s *Server) restartBackoff(n int) time.Duration {
	d := max(s.cfg.Raft.Raft.RetryBackoff, time.Millisecond)
	for range n {
		if d >= maxRestartBackoff {
			break
		}
		d *= 2
	}
	return min(d, maxRestartBackoff)
}

// supervise probes the node's folder after each backoff and starts the
// node once it takes a write.
func (s *Server) supervise(r *restarter, delay time.Duration) {
	defer close(r.done)
	timer := s.cfg.Clock.NewTimer(delay)
	defer timer.Stop()
	for {
		r.set(func(st *RestartStatus) { st.Next = s.cfg.Clock.Now().Add(delay) })
		select {
		case <-r.stop:
			return
		case <-timer.C:
		}
		err := storage.ProbeWrite(s.cfg.Raft.Disk, s.raft.Dir())
		if err == nil {
			var started bool
			started, err = s.restartNow(r)
			if started || err == nil {
				return
			}
			if storage.FaultOf(err) == storage.NoFault {
				// Not the disk's doing: starting again will not cure it.
				s.log.Error("the node cannot start again by itself", "err", err)
				s.endRestart(r)
				return
			}
		}
		text := storage.Describe(err)
		r.set(func(st *RestartStatus) { st.Attempts++; st.LastError = text })
		delay = min(delay*2, maxRestartBackoff)
		timer.Reset(delay)
	}
}

// restartNow starts the node for supervision r, unless it was ended
// meanwhile; started is false then, and err nil.
func (s *Server) restartNow(r *restarter) (started bool, err error) {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	select {
	case <-r.stop:
		s.mu.Unlock()
		return false, nil
	default:
	}
	if s.down || s.restart != r {
		s.mu.Unlock()
		return false, nil
	}
	// Ended before the start, so that a new incarnation that fails at
	// once can start a supervision of its own.
	s.restart = nil
	s.mu.Unlock()
	if err := s.start(context.Background()); err != nil {
		// Back under supervision, unless a stop or kill came meanwhile.
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.down || s.restart != nil {
			return false, nil
		}
		s.restart = r
		return false, err
	}
	s.log.Info("the node started again by itself: its folder takes writes again")
	if s.cfg.OnRestart != nil {
		r.mu.Lock()
		st := r.status
		r.mu.Unlock()
		s.cfg.OnRestart(st)
	}
	return true, nil
}

// endRestart drops supervision r if it is the server's.
func (s *Server) endRestart(r *restarter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restart == r {
		s.restart = nil
	}
}

// endRestarts ends the supervision, if one runs, and waits for its
// goroutine; down says the node was stopped or killed by hand, so no
// supervision may start until it is started again. It must not be called
// with life held.
func (s *Server) endRestarts(down bool) {
	s.mu.Lock()
	s.down = down
	r := s.restart
	s.restart = nil
	s.mu.Unlock()
	if r != nil {
		close(r.stop)
		<-r.done
	}
}
