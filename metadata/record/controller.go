package record

// ControllerEndpoint is one listener of a controller
// (RegisterControllerRecord's EndPoints). Name is the listener name, e.g.
// "CONTROLLER".
type ControllerEndpoint struct {
	Name             string
	Host             string
	Port             uint16
	SecurityProtocol int16
}

// ControllerFeature is a feature range a controller supports
// (RegisterControllerRecord's Features).
type ControllerFeature struct {
	Name                string
	MinSupportedVersion int16
	MaxSupportedVersion int16
}

// RegisterControllerRecord (apiKey 27, version 0) registers a controller
// incarnation (KIP-919): a Kafka controller writes it for itself once it
// sees metadata.version 3.7-IV0 or later, so that brokers and other
// controllers learn its listeners and supported features from the log.
// kraftlab's own controllers never write it (their quorum is static).
type RegisterControllerRecord struct {
	Version          int16
	ControllerID     int32
	IncarnationID    Uuid
	ZkMigrationReady bool
	EndPoints        []ControllerEndpoint
	Features         []ControllerFeature
}

// APIKey is KeyRegisterController.
func (*RegisterControllerRecord) APIKey() APIKey { return KeyRegisterController }

// RecordVersion is r.Version.
func (r *RegisterControllerRecord) RecordVersion() int16 { return r.Version }

func (r *RegisterControllerRecord) encode(w *writer) {
	w.int32(r.ControllerID)
	w.uuid(r.IncarnationID)
	w.bool(r.ZkMigrationReady)
	w.arrayLen(len(r.EndPoints), false, false)
	for _, e := range r.EndPoints {
		w.string("EndPoints.Name", e.Name)
		w.string("EndPoints.Host", e.Host)
		w.uint16(e.Port)
		w.int16(e.SecurityProtocol)
		w.uvarint(0)
	}
	w.arrayLen(len(r.Features), false, false)
	for _, f := range r.Features {
		w.string("Features.Name", f.Name)
		w.int16(f.MinSupportedVersion)
		w.int16(f.MaxSupportedVersion)
		w.uvarint(0)
	}
	w.uvarint(0)
}

func (r *RegisterControllerRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.ControllerID = rd.int32()
	r.IncarnationID = rd.uuid()
	r.ZkMigrationReady = rd.bool()
	// An endpoint is at least 7 bytes (two empty strings, port, protocol,
	// no tags), a feature at least 6.
	if n, ok := rd.arrayLen("EndPoints", false, 7); ok {
		r.EndPoints = make([]ControllerEndpoint, n)
		for i := range r.EndPoints {
			e := &r.EndPoints[i]
			e.Name = rd.string("EndPoints.Name")
			e.Host = rd.string("EndPoints.Host")
			e.Port = rd.uint16()
			e.SecurityProtocol = rd.int16()
			rd.noTags()
		}
	}
	if n, ok := rd.arrayLen("Features", false, 6); ok {
		r.Features = make([]ControllerFeature, n)
		for i := range r.Features {
			f := &r.Features[i]
			f.Name = rd.string("Features.Name")
			f.MinSupportedVersion = rd.int16()
			f.MaxSupportedVersion = rd.int16()
			rd.noTags()
		}
	}
	rd.noTags()
}

// UnregisterControllerRecord (apiKey 29, version 0) removes a controller's
// registration; Kafka writes it from metadata.version 4.4-IV2 when a
// controller leaves the quorum.
type UnregisterControllerRecord struct {
	Version      int16
	ControllerID int32
}

// APIKey is KeyUnregisterController.
func (*UnregisterControllerRecord) APIKey() APIKey { return KeyUnregisterController }

// RecordVersion is r.Version.
func (r *UnregisterControllerRecord) RecordVersion() int16 { return r.Version }

func (r *UnregisterControllerRecord) encode(w *writer) {
	w.int32(r.ControllerID)
	w.uvarint(0)
}

func (r *UnregisterControllerRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.ControllerID = rd.int32()
	rd.noTags()
}

func (r *RegisterControllerRecord) json(w *JSONWriter) {
	w.Key("controllerId")
	w.Int(int64(r.ControllerID))
	w.Key("incarnationId")
	w.String(r.IncarnationID.String())
	w.Key("zkMigrationReady")
	w.Bool(r.ZkMigrationReady)
	w.Key("endPoints")
	w.BeginArray()
	for _, e := range r.EndPoints {
		w.Begin()
		w.Key("name")
		w.String(e.Name)
		w.Key("host")
		w.String(e.Host)
		w.Key("port")
		w.Int(int64(e.Port))
		w.Key("securityProtocol")
		w.Int(int64(e.SecurityProtocol))
		w.End()
	}
	w.EndArray()
	w.Key("features")
	w.BeginArray()
	for _, f := range r.Features {
		w.Begin()
		w.Key("name")
		w.String(f.Name)
		w.Key("minSupportedVersion")
		w.Int(int64(f.MinSupportedVersion))
		w.Key("maxSupportedVersion")
		w.Int(int64(f.MaxSupportedVersion))
		w.End()
	}
	w.EndArray()
}
