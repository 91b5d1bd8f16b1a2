package engine

import (
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/server"
)

// kraftVersion is the kraft.version the quorum runs: the one the
// playground was formatted with, or a higher one its leader's log holds
// since kafka-features upgraded it (a static quorum turned dynamic).
func (e *engine) kraftVersion() int64 {
	v := e.cfg.Settings.KRaftVersion
	if l := e.quorumLeader(); l != nil && l.q != nil {
		v = max(v, int64(l.q.Status().KRaftVersion))
	}
	return v
}

// joiningSettings are the settings a controller that joins the quorum at
// run time starts with: those of a dynamic quorum once the quorum is one,
// also when it was formatted static and upgraded since.
func (e *engine) joiningSettings() server.Settings {
	s := e.cfg.Settings
	if e.kraftVersion() >= int64(raft.KRaftVersion1) {
		s.KRaftVersion = int64(raft.KRaftVersion1)
	}
	return s
}
