package quorum

import (
	"errors"
	"fmt"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// updateFeaturesAPI is UpdateFeatures (KIP-584), which Kafka's
// controller serves (ControllerApis) and `kafka-features upgrade` sends
// to the active controller. kraftlab changes only kraft.version at run
// time, which the quorum owns: Kafka's FeatureControlManager hands that
// feature to its raft client (upgradeKRaftVersion), as this does. Kafka
// authorizes ALTER on the cluster, granted to anyone here as for
// AddRaftVoter.
var updateFeaturesAPI = wire.APIRange{Key: kmsg.UpdateFeatures.Int16(), MinVersion: 0, MaxVersion: 2}

// KRaftVersionFeature is the feature name of kraft.version.
const KRaftVersionFeature = "kraft.version"

// The UpgradeType values of an UpdateFeatures request (v1+;
// FeatureUpdate.UpgradeType).
const (
	upgradeTypeUpgrade         int8 = 1
	upgradeTypeSafeDowngrade   int8 = 2
	upgradeTypeUnsafeDowngrade int8 = 3
)

// updateFeatures handles UpdateFeatures on the node's loop with the
// checks of Kafka's FeatureControlManager.updateFeature in its order: a
// kraft.version upgrade goes to raft, which appends it, and the answer
// waits for it to commit, as Kafka's waits for the NoOpRecord after it.
func (in *instance) updateFeatures(now time.Time, req *wire.Request) {
	body := req.Body.(*kmsg.UpdateFeaturesRequest)
	st := in.raft.Status()
	if st.Role != raft.Leader {
		respondVoterChange(req, kerr.NotController, "")
		return
	}
	off := int64(-1)
	for _, u := range body.FeatureUpdates {
		o, code, msg := in.updateFeature(now, st, u, body.Version, body.ValidateOnly)
		if code != nil {
			// QuorumController.updateFeatures' wording.
			respondVoterChange(req, code, "The update failed for all features since the following feature had an error: "+msg)
			return
		}
		off = max(off, o)
	}
	if off < 0 {
		respondVoterChange(req, nil, "")
		return
	}
	timeout := in.cfg.Raft.RequestTimeout
	if body.TimeoutMillis > 0 {
		timeout = time.Duration(body.TimeoutMillis) * time.Millisecond
	}
	in.voterWaits = append(in.voterWaits, voterWait{req: req, epoch: st.Epoch, offset: off, deadline: now.Add(timeout)})
}

// updateFeature is one update: the offset to wait for (-1 for none), or
// the error to answer the whole request with.
func (in *instance) updateFeature(now time.Time, st raft.Status, u kmsg.UpdateFeaturesRequestFeatureUpdate, version int16, validateOnly bool) (int64, *kerr.Error, string) {
	invalid := func(format string, args ...any) (int64, *kerr.Error, string) {
		return 0, kerr.InvalidUpdateVersion, fmt.Sprintf("Invalid update version %d for feature %s. ", u.MaxVersionLevel, u.Feature) + fmt.Sprintf(format, args...)
	}
	upgradeType := u.UpgradeType
	if version < 1 {
		upgradeType = upgradeTypeUpgrade
		if u.AllowDowngrade {
			upgradeType = upgradeTypeSafeDowngrade
		}
	}
	if u.Feature != KRaftVersionFeature {
		return invalid("kraftlab changes no feature but %s at run time.", KRaftVersionFeature)
	}
	cur, v := st.KRaftVersion, raft.KRaftVersion(u.MaxVersionLevel)
	switch {
	case upgradeType < upgradeTypeUpgrade || upgradeType > upgradeTypeUnsafeDowngrade:
		return invalid("The controller does not support the given upgrade type.")
	case u.MaxVersionLevel < 0:
		return invalid("A feature version cannot be less than 0.")
	case v > maxKRaftVersion:
		return invalid("Local controller %d only supports versions %d-%d", in.id, minKRaftVersion, maxKRaftVersion)
	case v < cur && upgradeType == upgradeTypeUpgrade:
		return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
	case v > cur && upgradeType != upgradeTypeUpgrade:
		return invalid("Can't downgrade to a newer version.")
	case upgradeType != upgradeTypeUpgrade && v != cur:
		return invalid("Can't downgrade the version of this feature.")
	case upgradeType != upgradeTypeUpgrade:
		return -1, nil, ""
	}
	off, err := in.raft.UpgradeKRaftVersion(now, st.Epoch, v, validateOnly)
	switch {
	case err == nil:
		return off, nil, ""
	case errors.Is(err, raft.ErrNotLeader):
		return 0, kerr.NotController, err.Error()
	case errors.Is(err, raft.ErrVotersUnsupported):
		// LeaderState's wording.
		return 0, kerr.InvalidUpdateVersion, fmt.Sprintf("Invalid upgrade of %s to %d because not all of the voters support it", KRaftVersionFeature, v)
	case errors.Is(err, raft.ErrInvalidUpgrade), errors.Is(err, raft.ErrStaticQuorum):
		return 0, kerr.InvalidUpdateVersion, err.Error()
	}
	// ErrVotersUndescribed: Kafka's leader throws IllegalStateException,
	// which its controller answers with UNKNOWN_SERVER_ERROR.
	return 0, kerr.UnknownServerError, err.Error()
}

// respondUpdateFeatures answers an UpdateFeatures request as Kafka's
// UpdateFeaturesResponse.createWithErrors does: a top-level error, and
// before v2 a result per feature when there is none.
func respondUpdateFeatures(req *wire.Request, body *kmsg.UpdateFeaturesRequest, code *kerr.Error, msg *string) {
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	if code == kerr.NotLeaderForPartition {
		// The leadership ended while the upgrade waited to commit.
		code = kerr.NotController
	}
	if code != nil {
		resp.ErrorCode, resp.ErrorMessage = code.Code, msg
	} else {
		for _, u := range body.FeatureUpdates {
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature = u.Feature
			resp.Results = append(resp.Results, r)
		}
	}
	req.Respond(resp)
}
