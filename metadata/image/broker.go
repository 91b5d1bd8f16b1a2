package image

import (
	"slices"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// BrokerRegistration is a registered broker incarnation (Kafka's
// org.apache.kafka.metadata.BrokerRegistration). It is immutable; its
// slices must not be changed.
type BrokerRegistration struct {
	ID    int32
	Epoch int64
	// IncarnationID changes each time the broker process starts.
	IncarnationID record.Uuid
	// Listeners are the broker's endpoints, in registration order.
	Listeners []record.BrokerEndpoint
	// SupportedFeatures are the feature ranges the broker can run.
	SupportedFeatures []record.BrokerFeature
	Rack              *string
	Fenced            bool
	// InControlledShutdown: the broker asked to shut down and is moving
	// its leaderships away.
	InControlledShutdown bool
	IsMigratingZkBroker  bool
	// Directories are the online log directories; CordonedDirectories
	// the cordoned ones, nil until the broker reports them.
	Directories         []record.Uuid
	CordonedDirectories []record.Uuid
}

func brokerFromRecord(r *record.RegisterBrokerRecord) *BrokerRegistration {
	return &BrokerRegistration{
		ID:                   r.BrokerID,
		Epoch:                r.BrokerEpoch,
		IncarnationID:        r.IncarnationID,
		Listeners:            r.EndPoints,
		SupportedFeatures:    r.Features,
		Rack:                 r.Rack,
		Fenced:               r.Fenced,
		InControlledShutdown: r.InControlledShutdown,
		IsMigratingZkBroker:  r.IsMigratingZkBroker,
		Directories:          r.LogDirs,
		CordonedDirectories:  r.CordonedLogDirs,
	}
}

// HasOnlineDir is Kafka's BrokerRegistration.hasOnlineDir
// (DirectoryId.isOnline): an unassigned or migrating directory counts as
// online, a lost one never, and a broker that reports no directories
// (registered before 3.7-IV2) has all of its online.
func (b *BrokerRegistration) HasOnlineDir(dir record.Uuid) bool {
	switch dir {
	case record.DirectoryUnassigned, record.DirectoryMigrating:
		return true
	case record.DirectoryLost:
		return false
	}
	return len(b.Directories) == 0 || slices.Contains(b.Directories, dir)
}

// Listener returns the endpoint named name (e.g. "PLAINTEXT").
func (b *BrokerRegistration) Listener(name string) (record.BrokerEndpoint, bool) {
	for _, e := range b.Listeners {
		if e.Name == name {
			return e, true
		}
	}
	return record.BrokerEndpoint{}, false
}

// Equal reports whether two registrations are the same.
func (b *BrokerRegistration) Equal(o *BrokerRegistration) bool {
	return b.ID == o.ID && b.Epoch == o.Epoch && b.IncarnationID == o.IncarnationID &&
		equalEmpty(b.Listeners, o.Listeners) && equalEmpty(b.SupportedFeatures, o.SupportedFeatures) &&
		equalPtr(b.Rack, o.Rack) && b.Fenced == o.Fenced && b.InControlledShutdown == o.InControlledShutdown &&
		b.IsMigratingZkBroker == o.IsMigratingZkBroker && equalEmpty(b.Directories, o.Directories) &&
		(b.CordonedDirectories == nil) == (o.CordonedDirectories == nil) &&
		slices.Equal(b.CordonedDirectories, o.CordonedDirectories)
}

// toRecord states the registration as a RegisterBrokerRecord at version v.
func (b *BrokerRegistration) toRecord(v int16) *record.RegisterBrokerRecord {
	r := &record.RegisterBrokerRecord{
		Version:              v,
		BrokerID:             b.ID,
		IsMigratingZkBroker:  b.IsMigratingZkBroker,
		IncarnationID:        b.IncarnationID,
		BrokerEpoch:          b.Epoch,
		EndPoints:            b.Listeners,
		Features:             b.SupportedFeatures,
		Rack:                 b.Rack,
		Fenced:               b.Fenced,
		InControlledShutdown: b.InControlledShutdown,
		LogDirs:              b.Directories,
		CordonedLogDirs:      b.CordonedDirectories,
	}
	if r.EndPoints == nil {
		r.EndPoints = []record.BrokerEndpoint{}
	}
	if r.Features == nil {
		r.Features = []record.BrokerFeature{}
	}
	return r
}

// equalEmpty compares slices, nil equal to empty.
func equalEmpty[T comparable](a, b []T) bool { return slices.Equal(a, b) }

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
