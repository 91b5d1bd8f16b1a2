package server

import (
	"testing"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// updateKRaftVersion is an UpdateFeatures request for kraft.version.
func updateKRaftVersion(level int16, upgradeType int8) *kmsg.UpdateFeaturesRequest {
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = 1
	req.TimeoutMillis = 5000
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = image.KRaftVersionFeature, level, upgradeType
	req.FeatureUpdates = append(req.FeatureUpdates, u)
	return req
}

// finalizedKRaftVersion is the kraft.version an ApiVersions v3 answer of
// addr lists as finalized, and whether it lists it, with the supported
// range's top.
func finalizedKRaftVersion(t *testing.T, addr string) (level, maxSupported int16, ok bool) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
	resp := do(t, addr, req).(*kmsg.ApiVersionsResponse)
	for _, f := range resp.SupportedFeatures {
		if f.Name == image.KRaftVersionFeature {
			maxSupported = f.MaxVersion
		}
	}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == image.KRaftVersionFeature {
			return f.MaxVersionLevel, maxSupported, true
		}
	}
	return 0, maxSupported, false
}

// A static quorum upgrades to kraft.version 1 with UpdateFeatures, once
// every voter described itself to the leader, also through a broker;
// then the voter set names their directory ids, ApiVersions lists the
// new level, and the voter RPCs work.
func TestStaticQuorumUpgradesKRaftVersion(t *testing.T) {
	ts := startServers(t)
	c1, c2, c3, b := ts.byID[1], ts.byID[2], ts.byID[3], ts.byID[101]
	var l *Server
	waitFor(t, "a leader", func() bool { l = leaderOf(c1, c2, c3); return l != nil })
	waitFor(t, "the broker's image", func() bool { return !b.image().Features().IsEmpty() })
	if lvl, top, ok := finalizedKRaftVersion(t, l.Addr()); !ok || lvl != 0 || top != 1 {
		t.Fatalf("a static controller's ApiVersions: kraft.version %d (listed %v), supported up to %d", lvl, ok, top)
	}
	if _, top, ok := finalizedKRaftVersion(t, b.Addr()); ok || top != 1 {
		t.Fatalf("a broker lists kraft.version 0 as finalized (%v) or supports up to %d", ok, top)
	}
	resp := do(t, l.Addr(), updateKRaftVersion(0, 2)).(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("a downgrade to the same level: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	waitFor(t, "the upgrade through the broker", func() bool {
		resp := do(t, b.Addr(), updateKRaftVersion(1, 1)).(*kmsg.UpdateFeaturesResponse)
		switch resp.ErrorCode {
		case 0:
			return true
		case kerr.InvalidUpdateVersion.Code, kerr.NotController.Code, kerr.RequestTimedOut.Code:
			// A voter has not described itself to a new leader yet.
			return false
		}
		t.Fatalf("UpdateFeatures: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
		return false
	})
	waitFor(t, "kraft.version 1 everywhere", func() bool {
		for _, s := range []*Server{c1, c2, c3, b} {
			if s.Raft().Status().KRaftVersion != raft.KRaftVersion1 {
				return false
			}
		}
		return true
	})
	for _, v := range describeQuorum(t, c1, c2, c3).CurrentVoters {
		if v.ReplicaDirectoryID == [16]byte{} {
			t.Errorf("voter %d has no directory id after the upgrade", v.ReplicaID)
		}
	}
	for _, s := range []*Server{l, b} {
		if lvl, _, ok := finalizedKRaftVersion(t, s.Addr()); !ok || lvl != 1 {
			t.Errorf("node %d's ApiVersions: kraft.version %d (listed %v)", s.ID(), lvl, ok)
		}
	}
	resp = do(t, l.Addr(), updateKRaftVersion(0, 2)).(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("a downgrade: %v, want INVALID_UPDATE_VERSION", kerr.ErrorForCode(resp.ErrorCode))
	}
	// Dynamic now: removing a voter is no longer UNSUPPORTED_VERSION.
	rm := kmsg.NewPtrRemoveRaftVoterRequest()
	rm.VoterID = 3
	waitFor(t, "RemoveRaftVoter", func() bool {
		l := leaderOf(c1, c2, c3)
		if l == nil {
			return false
		}
		dq := describeQuorum(t, c1, c2, c3)
		for _, v := range dq.CurrentVoters {
			if v.ReplicaID == 3 {
				rm.VoterDirectoryID = v.ReplicaDirectoryID
			}
		}
		code := do(t, l.Addr(), rm).(*kmsg.RemoveRaftVoterResponse).ErrorCode
		if code == kerr.UnsupportedVersion.Code {
			t.Fatal("RemoveRaftVoter after the upgrade: UNSUPPORTED_VERSION")
		}
		return code == 0
	})
}
