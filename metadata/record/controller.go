package record

// ControllerEndpoint is one listener of a controller
// (RegisterControllerRecord's EndPoints; Name is the listener name, e.g.
// "CONTROLLER"). Kafka's schema spells it as a broker's endpoint.
type ControllerEndpoint = BrokerEndpoint

// ControllerFeature is a feature range a controller supports
// (RegisterControllerRecord's Features), spelled as a broker's.
type ControllerFeature = BrokerFeature

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
	encodeEndpoints(w, r.EndPoints)
	encodeFeatures(w, r.Features)
	w.uvarint(0)
}

func (r *RegisterControllerRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.ControllerID = rd.int32()
	r.IncarnationID = rd.uuid()
	r.ZkMigrationReady = rd.bool()
	r.EndPoints = decodeEndpoints(rd)
	r.Features = decodeFeatures(rd)
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
	endpointsJSON(w, r.EndPoints)
	featuresJSON(w, r.Features)
}
