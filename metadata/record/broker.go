package record

// BrokerEndpoint is one listener of a broker (RegisterBrokerRecord's
// EndPoints). Name is the listener name, e.g. "PLAINTEXT".
type BrokerEndpoint struct {
	Name             string
	Host             string
	Port             uint16
	SecurityProtocol int16
}

// Security protocol ids (Kafka's SecurityProtocol).
const (
	SecurityProtocolPlaintext int16 = 0
	SecurityProtocolSSL       int16 = 1
	SecurityProtocolSASLPlain int16 = 2
	SecurityProtocolSASLSSL   int16 = 3
)

// BrokerFeature is a feature range a broker supports (RegisterBrokerRecord's
// Features).
type BrokerFeature struct {
	Name                string
	MinSupportedVersion int16
	MaxSupportedVersion int16
}

// RegisterBrokerRecord (apiKey 0, versions 0-4) registers a broker
// incarnation: the controller writes it when it accepts a
// BrokerRegistration request. Kafka's schema defaults Fenced to true; Go's
// zero value is false, so set it.
type RegisterBrokerRecord struct {
	// Version is the record version (4 at Kafka 4.4's metadata.version).
	Version              int16
	BrokerID             int32
	IsMigratingZkBroker  bool // v2+
	IncarnationID        Uuid
	BrokerEpoch          int64
	EndPoints            []BrokerEndpoint
	Features             []BrokerFeature
	Rack                 *string // nullable
	Fenced               bool
	InControlledShutdown bool // v1+
	// LogDirs are the broker's online log directories (tag 0, v3+).
	LogDirs []Uuid
	// CordonedLogDirs are its cordoned log directories, nil (null) until
	// the broker reports them (tag 1, v4+).
	CordonedLogDirs []Uuid
}

// APIKey is KeyRegisterBroker.
func (*RegisterBrokerRecord) APIKey() APIKey { return KeyRegisterBroker }

// RecordVersion is r.Version.
func (r *RegisterBrokerRecord) RecordVersion() int16 { return r.Version }

func (r *RegisterBrokerRecord) check() error {
	switch v := r.Version; {
	case v < 2 && r.IsMigratingZkBroker:
		return unsupported("IsMigratingZkBroker", 2)
	case v < 1 && r.InControlledShutdown:
		return unsupported("InControlledShutdown", 1)
	case v < 3 && len(r.LogDirs) > 0:
		return unsupported("LogDirs", 3)
	case v < 4 && r.CordonedLogDirs != nil:
		return unsupported("CordonedLogDirs", 4)
	}
	return nil
}

func (r *RegisterBrokerRecord) encode(w *writer) {
	v := r.Version
	w.int32(r.BrokerID)
	if v >= 2 {
		w.bool(r.IsMigratingZkBroker)
	}
	w.uuid(r.IncarnationID)
	w.int64(r.BrokerEpoch)
	encodeEndpoints(w, r.EndPoints)
	encodeFeatures(w, r.Features)
	w.nullableString("Rack", r.Rack)
	w.bool(r.Fenced)
	if v >= 1 {
		w.bool(r.InControlledShutdown)
	}
	logDirs := v >= 3 && len(r.LogDirs) > 0
	cordoned := v >= 4 && r.CordonedLogDirs != nil
	w.uvarint(count(logDirs, cordoned))
	if logDirs {
		w.tagUuids(0, r.LogDirs, false)
	}
	if cordoned {
		w.tagUuids(1, r.CordonedLogDirs, true)
	}
}

func (r *RegisterBrokerRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.BrokerID = rd.int32()
	if v >= 2 {
		r.IsMigratingZkBroker = rd.bool()
	}
	r.IncarnationID = rd.uuid()
	r.BrokerEpoch = rd.int64()
	r.EndPoints = decodeEndpoints(rd)
	r.Features = decodeFeatures(rd)
	r.Rack = rd.nullableString("Rack")
	r.Fenced = rd.bool()
	if v >= 1 {
		r.InControlledShutdown = rd.bool()
	}
	rd.tags(func(tag uint32, f *reader) bool {
		switch {
		case tag == 0 && v >= 3:
			r.LogDirs = nilIfEmpty(f.uuids("LogDirs", false))
		case tag == 1 && v >= 4:
			r.CordonedLogDirs = f.uuids("CordonedLogDirs", true)
		default:
			return false
		}
		return true
	})
}

// UnregisterBrokerRecord (apiKey 1, version 0) removes a broker's
// registration.
type UnregisterBrokerRecord struct {
	Version     int16
	BrokerID    int32
	BrokerEpoch int64
}

// APIKey is KeyUnregisterBroker.
func (*UnregisterBrokerRecord) APIKey() APIKey { return KeyUnregisterBroker }

// RecordVersion is r.Version.
func (r *UnregisterBrokerRecord) RecordVersion() int16 { return r.Version }

func (r *UnregisterBrokerRecord) encode(w *writer) {
	w.int32(r.BrokerID)
	w.int64(r.BrokerEpoch)
	w.uvarint(0)
}

func (r *UnregisterBrokerRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.BrokerID = rd.int32()
	r.BrokerEpoch = rd.int64()
	rd.noTags()
}

// FenceBrokerRecord (apiKey 7, version 0) fences a broker. Kafka 4.x's
// controller no longer writes it (it writes BrokerRegistrationChangeRecord
// with Fenced = FencingFence), but a log may hold it.
type FenceBrokerRecord struct {
	Version int16
	ID      int32
	Epoch   int64
}

// APIKey is KeyFenceBroker.
func (*FenceBrokerRecord) APIKey() APIKey { return KeyFenceBroker }

// RecordVersion is r.Version.
func (r *FenceBrokerRecord) RecordVersion() int16 { return r.Version }

func (r *FenceBrokerRecord) encode(w *writer) {
	w.int32(r.ID)
	w.int64(r.Epoch)
	w.uvarint(0)
}

func (r *FenceBrokerRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.ID = rd.int32()
	r.Epoch = rd.int64()
	rd.noTags()
}

// UnfenceBrokerRecord (apiKey 8, version 0) unfences a broker; like
// FenceBrokerRecord, read but no longer written by Kafka 4.x.
type UnfenceBrokerRecord struct {
	Version int16
	ID      int32
	Epoch   int64
}

// APIKey is KeyUnfenceBroker.
func (*UnfenceBrokerRecord) APIKey() APIKey { return KeyUnfenceBroker }

// RecordVersion is r.Version.
func (r *UnfenceBrokerRecord) RecordVersion() int16 { return r.Version }

func (r *UnfenceBrokerRecord) encode(w *writer) {
	w.int32(r.ID)
	w.int64(r.Epoch)
	w.uvarint(0)
}

func (r *UnfenceBrokerRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.ID = rd.int32()
	r.Epoch = rd.int64()
	rd.noTags()
}

// The endpoint and feature arrays of RegisterBrokerRecord and
// RegisterControllerRecord, which Kafka's schemas spell the same.

func encodeEndpoints(w *writer, eps []BrokerEndpoint) {
	w.arrayLen(len(eps), false, false)
	for _, e := range eps {
		w.string("EndPoints.Name", e.Name)
		w.string("EndPoints.Host", e.Host)
		w.uint16(e.Port)
		w.int16(e.SecurityProtocol)
		w.uvarint(0)
	}
}

func encodeFeatures(w *writer, fs []BrokerFeature) {
	w.arrayLen(len(fs), false, false)
	for _, f := range fs {
		w.string("Features.Name", f.Name)
		w.int16(f.MinSupportedVersion)
		w.int16(f.MaxSupportedVersion)
		w.uvarint(0)
	}
}

// decodeEndpoints reads an endpoint array: an endpoint is at least 7
// bytes (two empty strings, port, protocol, no tags).
func decodeEndpoints(rd *reader) []BrokerEndpoint {
	n, ok := rd.arrayLen("EndPoints", false, 7)
	if !ok {
		return nil
	}
	eps := make([]BrokerEndpoint, n)
	for i := range eps {
		e := &eps[i]
		e.Name = rd.string("EndPoints.Name")
		e.Host = rd.string("EndPoints.Host")
		e.Port = rd.uint16()
		e.SecurityProtocol = rd.int16()
		rd.noTags()
	}
	return eps
}

// decodeFeatures reads a feature array: a feature is at least 6 bytes.
func decodeFeatures(rd *reader) []BrokerFeature {
	n, ok := rd.arrayLen("Features", false, 6)
	if !ok {
		return nil
	}
	fs := make([]BrokerFeature, n)
	for i := range fs {
		f := &fs[i]
		f.Name = rd.string("Features.Name")
		f.MinSupportedVersion = rd.int16()
		f.MaxSupportedVersion = rd.int16()
		rd.noTags()
	}
	return fs
}
