package controller

import (
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// registerBroker is Kafka's ClusterControlManager.registerBroker: a new
// incarnation gets a new broker epoch and starts fenced; the same
// incarnation registering again keeps its epoch and state.
//
// Kafka's broker epoch is the offset its RegisterBrokerRecord will take,
// which Kafka's controller knows because it is the log's only writer.
// kraftlab's raft client also takes other writers' records, so the epoch is
// the controller's lower bound of that offset (above the broker's previous
// epoch), and the real offset, known once the record commits, is what
// caught-up is measured against.
func (c *QuorumController) registerBroker(r *kmsg.BrokerRegistrationRequest) outcome {
	resp := kmsg.NewPtrBrokerRegistrationResponse()
	resp.BrokerEpoch = -1
	fail := func(e *kerr.Error, format string, args ...any) outcome {
		resp.ErrorCode = e.Code
		c.log.Info("refusing broker registration", "broker", r.BrokerID, "error", e.Message, "why", fmt.Sprintf(format, args...))
		return outcome{resp: resp}
	}
	img := c.st.working
	if r.ClusterID != c.cfg.ClusterID {
		return fail(kerr.InconsistentClusterID, "expected cluster id %s, but got cluster id %s", c.cfg.ClusterID, r.ClusterID)
	}
	if r.BrokerID < 0 {
		return fail(kerr.InvalidRegistration, "invalid broker id %d", r.BrokerID)
	}
	existing := img.Cluster().Broker(r.BrokerID)
	incarnation := record.Uuid(r.IncarnationID)
	if existing != nil && existing.IncarnationID != incarnation && c.hasValidSession(r.BrokerID) {
		return fail(kerr.DuplicateBrokerRegistration, "another broker is registered with that broker id")
	}
	if r.IsMigratingZkBroker {
		return fail(kerr.BrokerIDNotRegistered, "controller does not support registering ZK brokers")
	}
	mv, _ := img.Features().MetadataVersion()
	v := versionsFor(mv)
	var dirs []record.Uuid
	if v.directoriesInRecs {
		if len(r.LogDirs) == 0 {
			return fail(kerr.InvalidRegistration, "no directories specified in request")
		}
		seen := map[record.Uuid]bool{}
		for _, d := range r.LogDirs {
			u := record.Uuid(d)
			if reservedDirectory(u) {
				return fail(kerr.InvalidRegistration, "reserved directory id in request")
			}
			if seen[u] {
				return fail(kerr.InvalidRegistration, "duplicate directory id in request")
			}
			seen[u] = true
			if other := directoryOwner(img, u); other >= 0 && other != r.BrokerID {
				return fail(kerr.InvalidRegistration, "broker %d is already registered with directory %s", other, u)
			}
			dirs = append(dirs, u)
		}
	}
	rec := &record.RegisterBrokerRecord{
		Version:       v.registerBroker,
		BrokerID:      r.BrokerID,
		IncarnationID: incarnation,
		Rack:          r.Rack,
		Fenced:        true,
		LogDirs:       dirs,
	}
	for _, l := range r.Listeners {
		rec.EndPoints = append(rec.EndPoints, record.BrokerEndpoint{Name: l.Name, Host: l.Host, Port: l.Port, SecurityProtocol: l.SecurityProtocol})
	}
	hasMV := false
	for _, f := range r.Features {
		if f.Name == record.MetadataVersionFeature {
			hasMV = true
			if mv < f.MinSupportedVersion || mv > f.MaxSupportedVersion {
				return fail(kerr.UnsupportedVersion, "the broker does not support finalized version %d of metadata.version; it wants a version between %d and %d, inclusive",
					mv, f.MinSupportedVersion, f.MaxSupportedVersion)
			}
		} else if level, ok := img.Features().Level(f.Name); ok && level != 0 && (level < f.MinSupportedVersion || level > f.MaxSupportedVersion) {
			return fail(kerr.UnsupportedVersion, "the broker does not support finalized version %d of %s", level, f.Name)
		}
		rec.Features = append(rec.Features, record.BrokerFeature{Name: f.Name, MinSupportedVersion: f.MinSupportedVersion, MaxSupportedVersion: f.MaxSupportedVersion})
	}
	if !hasMV {
		return fail(kerr.InvalidRegistration, "request features do not contain %q", record.MetadataVersionFeature)
	}
	for _, name := range img.Features().Names() {
		if level, _ := img.Features().Level(name); level != 0 && !requestHasFeature(r, name) {
			return fail(kerr.UnsupportedVersion, "the broker does not support finalized version %d of %s", level, name)
		}
	}

	var recs []record.Record
	var evs []Event
	if existing != nil && existing.IncarnationID == incarnation {
		rec.BrokerEpoch, rec.Fenced, rec.InControlledShutdown = existing.Epoch, existing.Fenced, existing.InControlledShutdown
	} else {
		recs, evs = c.previousIncarnationGone(img, r, existing)
		epoch := c.st.nextOffset + int64(len(recs))
		if existing != nil {
			epoch = max(epoch, existing.Epoch+1)
		}
		rec.BrokerEpoch = epoch
	}
	index := int64(len(recs))
	recs = append(recs, rec)
	evs = append(evs, Event{Kind: EventBrokerRegistered, Broker: r.BrokerID, BrokerEpoch: rec.BrokerEpoch})
	resp.BrokerEpoch = rec.BrokerEpoch
	id, epoch := r.BrokerID, rec.BrokerEpoch
	return outcome{records: recs, events: evs, resp: resp, onCommit: func(first int64) {
		// The session starts with the registration.
		c.st.heartbeats[id] = &brokerHeartbeat{lastContact: c.now(), metadataOffset: -1,
			registrationOffset: max(first+index, epoch), shutdownOffset: -1}
	}}
}

// previousIncarnationGone is Kafka's handleBrokerShutdown, run when a new
// incarnation registers: the previous one left its ISRs and leaderships.
// It shut down cleanly if the new one names the previous broker epoch
// (BrokerRegistration v3+ carries it, from the broker's clean shutdown
// file); with ELR on, an unclean shutdown also takes it out of every ELR,
// since its log may lack what it had acknowledged.
func (c *QuorumController) previousIncarnationGone(img *image.MetadataImage, r *kmsg.BrokerRegistrationRequest,
	existing *image.BrokerRegistration) ([]record.Record, []Event) {
	stored := int64(-2) // never a PreviousBrokerEpoch, whose absence is -1
	if existing != nil {
		stored = existing.Epoch
	}
	clean := r.Version >= 3 && stored == r.PreviousBrokerEpoch
	if elrEnabled(img) && !clean {
		return c.removeUncleanShutdown(img, r.BrokerID,
			fmt.Sprintf("broker %d registered a new incarnation after an unclean shutdown", r.BrokerID))
	}
	return c.removeBrokerFromIsrs(img, r.BrokerID, fmt.Sprintf("broker %d registered a new incarnation", r.BrokerID))
}

// hasValidSession reports whether broker id has heartbeated (or registered)
// within the session timeout.
func (c *QuorumController) hasValidSession(id int32) bool {
	hb := c.st.heartbeats[id]
	return hb != nil && !hb.lastContact.Add(c.cfg.SessionTimeout).Before(c.now())
}

// reservedDirectory is DirectoryId.reserved: the first 100 ids.
func reservedDirectory(u record.Uuid) bool {
	for _, b := range u[:15] {
		if b != 0 {
			return false
		}
	}
	return u[15] < 100
}

// directoryOwner is the broker registered with log directory d, -1 if none.
func directoryOwner(img *image.MetadataImage, d record.Uuid) int32 {
	for _, id := range img.Cluster().BrokerIDs() {
		for _, x := range img.Cluster().Broker(id).Directories {
			if x == d {
				return id
			}
		}
	}
	return -1
}

func requestHasFeature(r *kmsg.BrokerRegistrationRequest, name string) bool {
	for _, f := range r.Features {
		if f.Name == name {
			return true
		}
	}
	return false
}
