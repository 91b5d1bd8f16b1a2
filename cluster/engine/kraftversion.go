package engine

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/replication/quorum"
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

// upgradeRetryFor bounds how long UpgradeKRaftVersion retries a refusal
// that may pass: a voter describes itself to a new leader a fetch timeout
// after it starts following it.
const upgradeRetryFor = 30 * time.Second

// UpgradeKRaftVersion implements Engine.
func (e *engine) UpgradeKRaftVersion(ctx context.Context) error {
	e.joinMu.Lock()
	defer e.joinMu.Unlock()
	switch {
	case e.zkMode():
		return cluster.Errorf(cluster.ErrBadAction, "zk mode has no metadata quorum to upgrade")
	case e.cfg.Settings.Replication == raft.Push:
		return cluster.Errorf(cluster.ErrBadAction, "a push quorum (%s=push) keeps its voters: voter changes (KIP-853) are built for Kafka's pull replication", view.ReplicationKey)
	case e.kraftVersion() >= int64(raft.KRaftVersion1):
		return cluster.Errorf(cluster.ErrBadAction, "the quorum is dynamic already (kraft.version 1)")
	}
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = 1
	req.TimeoutMillis = 30000
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = quorum.KRaftVersionFeature, int16(raft.KRaftVersion1), 1
	req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{u}
	const what = "upgrade kraft.version"
	return e.askLeader(ctx, req, what, e.clock.Now().Add(upgradeRetryFor), func(code int16, msg string) (error, bool) {
		switch code {
		case 0:
			// Answered once committed; the leader's status shows it a
			// moment later.
			if e.kraftVersion() >= int64(raft.KRaftVersion1) {
				return nil, true
			}
			return cluster.Errorf(cluster.ErrNodeState, "the leader does not show kraft.version 1 yet"), false
		case kerr.InvalidUpdateVersion.Code, kerr.NotController.Code, kerr.RequestTimedOut.Code:
			// Until every voter has described itself to the leader.
			return cluster.Errorf(cluster.ErrRefused, "%s: %v: %s", what, kerr.ErrorForCode(code), msg), false
		}
		return cluster.Errorf(cluster.ErrRefused, "%s: %v: %s", what, kerr.ErrorForCode(code), msg), true
	})
}
