package record

// Values of BrokerRegistrationChangeRecord.Fenced (Kafka's
// BrokerRegistrationFencingChange).
const (
	FencingUnfence  int8 = -1
	FencingNoChange int8 = 0
	FencingFence    int8 = 1
)

// Values of BrokerRegistrationChangeRecord.InControlledShutdown (Kafka's
// BrokerRegistrationInControlledShutdownChange).
const (
	ControlledShutdownNoChange int8 = 0
	ControlledShutdownBegin    int8 = 1
)

// BrokerRegistrationChangeRecord (apiKey 17, versions 0-3) changes a
// registered broker: fencing, controlled shutdown, log directories. Kafka
// 4.x's controller fences and unfences with it at version 0
// (ReplicationControlManager.handleBrokerFenced/handleBrokerUnfenced), marks
// controlled shutdown at version 1, online log directories at 2 and cordoned
// ones at 3. All four changes are tagged fields.
type BrokerRegistrationChangeRecord struct {
	Version     int16
	BrokerID    int32
	BrokerEpoch int64
	// Fenced is FencingUnfence, FencingNoChange or FencingFence (tag 0).
	Fenced int8
	// InControlledShutdown is ControlledShutdownNoChange or
	// ControlledShutdownBegin (tag 1, v1+).
	InControlledShutdown int8
	// LogDirs are the broker's online log directories; empty means no
	// change (tag 2, v2+).
	LogDirs []Uuid
	// CordonedLogDirs are its cordoned log directories; nil means no change
	// (tag 3, v3+, nullable).
	CordonedLogDirs []Uuid
}

// APIKey is KeyBrokerRegistrationChange.
func (*BrokerRegistrationChangeRecord) APIKey() APIKey { return KeyBrokerRegistrationChange }

// RecordVersion is r.Version.
func (r *BrokerRegistrationChangeRecord) RecordVersion() int16 { return r.Version }

func (r *BrokerRegistrationChangeRecord) check() error {
	switch v := r.Version; {
	case v < 1 && r.InControlledShutdown != 0:
		return unsupported("InControlledShutdown", 1)
	case v < 2 && len(r.LogDirs) > 0:
		return unsupported("LogDirs", 2)
	case v < 3 && r.CordonedLogDirs != nil:
		return unsupported("CordonedLogDirs", 3)
	}
	return nil
}

func (r *BrokerRegistrationChangeRecord) encode(w *writer) {
	v := r.Version
	w.int32(r.BrokerID)
	w.int64(r.BrokerEpoch)
	fenced := r.Fenced != 0
	shutdown := v >= 1 && r.InControlledShutdown != 0
	logDirs := v >= 2 && len(r.LogDirs) > 0
	cordoned := v >= 3 && r.CordonedLogDirs != nil
	w.uvarint(count(fenced, shutdown, logDirs, cordoned))
	if fenced {
		w.tagInt8(0, r.Fenced)
	}
	if shutdown {
		w.tagInt8(1, r.InControlledShutdown)
	}
	if logDirs {
		w.tagUuids(2, r.LogDirs, false)
	}
	if cordoned {
		w.tagUuids(3, r.CordonedLogDirs, true)
	}
}

func (r *BrokerRegistrationChangeRecord) decode(rd *reader, v int16) {
	r.Version = v
	r.BrokerID = rd.int32()
	r.BrokerEpoch = rd.int64()
	rd.tags(func(tag uint32, f *reader) bool {
		switch {
		case tag == 0:
			r.Fenced = f.int8()
		case tag == 1 && v >= 1:
			r.InControlledShutdown = f.int8()
		case tag == 2 && v >= 2:
			r.LogDirs = nilIfEmpty(f.uuids("LogDirs", false))
		case tag == 3 && v >= 3:
			r.CordonedLogDirs = f.uuids("CordonedLogDirs", true)
		default:
			return false
		}
		return true
	})
}
