package image

import (
	"errors"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// registerController is a RegisterControllerRecord as a Kafka 4.4
// controller writes one for itself.
func registerController(id int32, incarnation uint64) *record.RegisterControllerRecord {
	return &record.RegisterControllerRecord{
		ControllerID: id, IncarnationID: record.NewUuid(incarnation, uint64(id)),
		EndPoints: []record.ControllerEndpoint{{Name: "CONTROLLER", Host: "localhost", Port: 9093, SecurityProtocol: record.SecurityProtocolPlaintext}},
		Features: []record.ControllerFeature{
			{Name: record.MetadataVersionFeature, MinSupportedVersion: 7, MaxSupportedVersion: 33},
			{Name: "kraft.version", MinSupportedVersion: 0, MaxSupportedVersion: 1},
		},
	}
}

func TestRegisterControllerReplaysIntoTheClusterImage(t *testing.T) {
	img := replayAll(t, cluster(t), 11, registerController(3000, 1), registerController(3001, 1))
	if got := img.Cluster().ControllerIDs(); len(got) != 2 || got[0] != 3000 || got[1] != 3001 {
		t.Fatalf("controllers %v, want [3000 3001]", got)
	}
	c := img.Cluster().Controller(3000)
	if c.IncarnationID != record.NewUuid(1, 3000) || c.ZkMigrationReady {
		t.Errorf("registration %+v", c)
	}
	if e, ok := c.Listener("CONTROLLER"); !ok || e.Port != 9093 {
		t.Errorf("CONTROLLER listener %+v, %v", e, ok)
	}
	// Features are sorted by name: kraft.version before metadata.version.
	if f := c.SupportedFeatures; len(f) != 2 || f[0].Name != "kraft.version" || f[1].MaxSupportedVersion != 33 {
		t.Errorf("features %+v", f)
	}
	if img.Cluster().Len() != 3 {
		t.Errorf("brokers changed: %d", img.Cluster().Len())
	}

	// A new incarnation replaces the registration; unregistering removes it.
	next := replayAll(t, img, 12, registerController(3000, 2), &record.UnregisterControllerRecord{ControllerID: 3001})
	if got := next.Cluster().ControllerIDs(); len(got) != 1 || next.Cluster().Controller(3000).IncarnationID != record.NewUuid(2, 3000) {
		t.Errorf("after re-registering and unregistering: %v %+v", got, next.Cluster().Controller(3000))
	}
	if img.Cluster().Controller(3001) == nil {
		t.Error("the earlier image changed")
	}
	// Unregistering a controller that is not there is no error, as in Kafka.
	replayAll(t, next, 13, &record.UnregisterControllerRecord{ControllerID: 7})
}

func TestRegisterControllerKeepsTheLastDuplicateListener(t *testing.T) {
	r := registerController(1, 1)
	r.EndPoints = append(r.EndPoints, record.ControllerEndpoint{Name: "CONTROLLER", Host: "other", Port: 1, SecurityProtocol: record.SecurityProtocolSSL})
	img := replayAll(t, Empty, 0, r)
	if ls := img.Cluster().Controller(1).Listeners; len(ls) != 1 || ls[0].Host != "other" {
		t.Errorf("listeners %+v, want the last CONTROLLER only", ls)
	}
}

func TestRegisterControllerRefusesAnUnknownSecurityProtocol(t *testing.T) {
	r := registerController(1, 1)
	r.EndPoints[0].SecurityProtocol = 4
	d := NewMetadataDelta(Empty)
	err := d.Replay(r)
	if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "unknown security protocol 4") {
		t.Fatalf("got %v", err)
	}
}

func TestControllersAreWrittenIntoSnapshots(t *testing.T) {
	img := replayAll(t, cluster(t), 11, registerController(3001, 1), registerController(3000, 1))
	recs, err := img.Records()
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	lastBroker, firstController := -1, -1
	for i, r := range recs {
		switch r := r.(type) {
		case *record.RegisterBrokerRecord:
			lastBroker = i
		case *record.RegisterControllerRecord:
			if firstController < 0 {
				firstController = i
			}
			ids = append(ids, r.ControllerID)
		}
	}
	if len(ids) != 2 || ids[0] != 3000 || ids[1] != 3001 || firstController < lastBroker {
		t.Fatalf("controllers %v at %d, last broker at %d: want 3000, 3001 after the brokers", ids, firstController, lastBroker)
	}
	back := load(t, Empty, recs, img.Provenance(), false)
	if !back.Equal(img) {
		t.Error("the snapshot's records do not rebuild the controllers")
	}
	// A snapshot that no longer holds a controller drops it.
	without := load(t, img, recs[:firstController], img.Provenance(), true)
	if ids := without.Cluster().ControllerIDs(); len(ids) != 0 {
		t.Errorf("controllers %v survived a snapshot without them", ids)
	}
}

func TestControllersNeedMetadataVersion3_7(t *testing.T) {
	img := replayAll(t, Empty, 0,
		&record.FeatureLevelRecord{Name: record.MetadataVersionFeature, FeatureLevel: mv3_7IV0 - 1},
		registerController(1, 1))
	if _, err := img.Records(); err == nil || !strings.Contains(err.Error(), "controller registrations need metadata.version 15") {
		t.Fatalf("got %v", err)
	}
}

func TestTransactionMarkersAreNotTheDeltas(t *testing.T) {
	for _, r := range []record.Record{&record.BeginTransactionRecord{}, &record.EndTransactionRecord{}, &record.AbortTransactionRecord{}} {
		if err := NewSnapshotDelta(Empty).Replay(r); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: got %v", record.Name(r), err)
		}
	}
}

func scram(user string, mechanism int8, iterations int32) *record.UserScramCredentialRecord {
	return &record.UserScramCredentialRecord{Name: user, Mechanism: mechanism, Salt: []byte("salt-" + user),
		StoredKey: []byte{1, 2}, ServerKey: []byte{3}, Iterations: iterations}
}

func TestScramCredentialsReplayAndSnapshot(t *testing.T) {
	img := replayAll(t, cluster(t), 11,
		scram("bob", record.ScramSHA512, 8192), scram("alice", record.ScramSHA256, 4096), scram("bob", record.ScramSHA256, 4096))
	if got := img.Scram().Users(record.ScramSHA256); len(got) != 2 || got[0] != "alice" {
		t.Fatalf("SHA-256 users %v", got)
	}
	if c := img.Scram().Credential(record.ScramSHA512, "bob"); c == nil || c.Iterations != 8192 || string(c.Salt) != "salt-bob" {
		t.Fatalf("bob's SHA-512 credential %+v", c)
	}
	recs, err := img.Records()
	if err != nil {
		t.Fatal(err)
	}
	if back := load(t, Empty, recs, img.Provenance(), false); !back.Equal(img) {
		t.Error("the snapshot's records do not rebuild the credentials")
	}
	next := replayAll(t, img, 12, &record.RemoveUserScramCredentialRecord{Name: "bob", Mechanism: record.ScramSHA512},
		&record.RemoveUserScramCredentialRecord{Name: "nobody", Mechanism: record.ScramSHA256})
	if next.Scram().Credential(record.ScramSHA512, "bob") != nil || len(next.Scram().Users(record.ScramSHA256)) != 2 {
		t.Errorf("after removing bob's SHA-512: %v", next.Scram().Users(record.ScramSHA512))
	}
	if img.Scram().Credential(record.ScramSHA512, "bob") == nil {
		t.Error("the earlier image changed")
	}
	if err := NewMetadataDelta(Empty).Replay(scram("x", 3, 1)); !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "unknown SCRAM mechanism 3") {
		t.Errorf("mechanism 3: %v", err)
	}
}
