package image

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// ControllerRegistration is a registered controller incarnation (Kafka's
// org.apache.kafka.metadata.ControllerRegistration, KIP-919). It is
// immutable; its slices must not be changed.
type ControllerRegistration struct {
	ID int32
	// IncarnationID changes each time the controller process starts.
	IncarnationID    record.Uuid
	ZkMigrationReady bool
	// Listeners are the controller's endpoints, one per listener name,
	// sorted by name.
	Listeners []record.ControllerEndpoint
	// SupportedFeatures are the feature ranges the controller can run, one
	// per feature name, sorted by name.
	SupportedFeatures []record.ControllerFeature
}

// controllerFromRecord builds a registration as Kafka's
// ControllerRegistration.Builder does: listeners and features are maps by
// name, so a later duplicate replaces an earlier one, and a listener with
// a security protocol id Kafka does not know is refused.
func controllerFromRecord(r *record.RegisterControllerRecord) (*ControllerRegistration, error) {
	c := &ControllerRegistration{ID: r.ControllerID, IncarnationID: r.IncarnationID, ZkMigrationReady: r.ZkMigrationReady}
	for _, e := range r.EndPoints {
		if e.SecurityProtocol < record.SecurityProtocolPlaintext || e.SecurityProtocol > record.SecurityProtocolSASLSSL {
			return nil, fmt.Errorf("controller %d listener %q: unknown security protocol %d", r.ControllerID, e.Name, e.SecurityProtocol)
		}
	}
	c.Listeners = lastByName(r.EndPoints, func(e record.ControllerEndpoint) string { return e.Name })
	c.SupportedFeatures = lastByName(r.Features, func(f record.ControllerFeature) string { return f.Name })
	return c, nil
}

// lastByName keeps, for each name, the last element with it, sorted by
// name: what putting the elements into a map and listing it sorted gives.
func lastByName[T any](in []T, name func(T) string) []T {
	out := make([]T, 0, len(in))
	for i := len(in) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(out, func(t T) bool { return name(t) == name(in[i]) }) {
			out = append(out, in[i])
		}
	}
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(name(a), name(b)) })
	return out
}

// Listener returns the endpoint named name (e.g. "CONTROLLER").
func (c *ControllerRegistration) Listener(name string) (record.ControllerEndpoint, bool) {
	for _, e := range c.Listeners {
		if e.Name == name {
			return e, true
		}
	}
	return record.ControllerEndpoint{}, false
}

// Equal reports whether two registrations are the same.
func (c *ControllerRegistration) Equal(o *ControllerRegistration) bool {
	return c.ID == o.ID && c.IncarnationID == o.IncarnationID && c.ZkMigrationReady == o.ZkMigrationReady &&
		slices.Equal(c.Listeners, o.Listeners) && slices.Equal(c.SupportedFeatures, o.SupportedFeatures)
}

// toRecord states the registration as a RegisterControllerRecord (version
// 0, the only one).
func (c *ControllerRegistration) toRecord() *record.RegisterControllerRecord {
	return &record.RegisterControllerRecord{
		ControllerID:     c.ID,
		IncarnationID:    c.IncarnationID,
		ZkMigrationReady: c.ZkMigrationReady,
		EndPoints:        slices.Clip(c.Listeners),
		Features:         slices.Clip(c.SupportedFeatures),
	}
}
