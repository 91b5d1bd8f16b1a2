package dump

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/metadata/record"
	"github.com/kraftlab/kraftlab/storage"
)

// ControlType names a control record's type as kafka-dump-log prints it;
// a type Kafka does not know either is "UNKNOWN(<id>)".
type ControlType string

// The control types (Kafka's ControlRecordType), named as DumpLogSegments
// prints them before the message.
const (
	ControlLeaderChange   ControlType = "LeaderChange"
	ControlSnapshotHeader ControlType = "SnapshotHeader"
	ControlSnapshotFooter ControlType = "SnapshotFooter"
	ControlKRaftVersion   ControlType = "KRaftVersion"
	ControlKRaftVoters    ControlType = "KRaftVoters"
	ControlAbort          ControlType = "ABORT"
	ControlCommit         ControlType = "COMMIT"
)

// decodeControl fills in a control record's type and message.
func decodeControl(rec *Record, r storage.Record) {
	t, err := storage.ControlType(r)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	var w record.JSONWriter
	switch t {
	case storage.ControlLeaderChange:
		rec.Control = ControlLeaderChange
		var m kmsg.LeaderChangeMessage
		if err = m.ReadFrom(r.Value); err == nil {
			leaderChangeJSON(&w, &m)
		}
	case storage.ControlSnapshotHeader, storage.ControlSnapshotFooter:
		rec.Control = ControlSnapshotHeader
		if t == storage.ControlSnapshotFooter {
			rec.Control = ControlSnapshotFooter
		}
		var c record.Control
		if c, err = record.DecodeControl(r); err == nil {
			snapshotJSON(&w, c)
		}
	case kmsg.ControlRecordKeyTypeKraftVersion:
		rec.Control = ControlKRaftVersion
		err = kraftVersionJSON(&w, r.Value)
	case kmsg.ControlRecordKeyTypeAbort, kmsg.ControlRecordKeyTypeCommit:
		rec.Control = ControlAbort
		if t == kmsg.ControlRecordKeyTypeCommit {
			rec.Control = ControlCommit
		}
		var m kmsg.EndTxnMarker
		if err = m.ReadFrom(r.Value); err == nil {
			w.Begin()
			w.Key("coordinatorEpoch")
			w.Int(int64(m.CoordinatorEpoch))
			w.End()
		}
	case kmsg.ControlRecordKeyTypeKraftVoters:
		rec.Control = ControlKRaftVoters
		var c record.Control
		if c, err = record.DecodeControl(r); err == nil {
			votersJSON(&w, c.(*record.Voters))
		}
	default:
		rec.Control = ControlType(fmt.Sprintf("UNKNOWN(%d)", int16(t)))
		return
	}
	if err != nil {
		rec.Error = fmt.Sprintf("%s at offset %d: %v", rec.Control, r.Offset, err)
		return
	}
	rec.Data = w.Bytes()
}

// leaderChangeJSON is LeaderChangeMessageJsonConverter.write: voter
// directory ids from version 1.
func leaderChangeJSON(w *record.JSONWriter, m *kmsg.LeaderChangeMessage) {
	voters := func(vs []kmsg.LeaderChangeMessageVoter) {
		w.BeginArray()
		for _, v := range vs {
			w.Begin()
			w.Key("voterId")
			w.Int(int64(v.VoterID))
			if m.Version >= 1 {
				w.Key("voterDirectoryId")
				w.String(record.Uuid(v.VoterDirectoryID).String())
			}
			w.End()
		}
		w.EndArray()
	}
	w.Begin()
	w.Key("version")
	w.Int(int64(m.Version))
	w.Key("leaderId")
	w.Int(int64(m.LeaderID))
	w.Key("voters")
	voters(m.Voters)
	w.Key("grantingVoters")
	voters(m.GrantingVoters)
	w.End()
}

func snapshotJSON(w *record.JSONWriter, c record.Control) {
	w.Begin()
	switch c := c.(type) {
	case *record.SnapshotHeader:
		w.Key("version")
		w.Int(int64(c.Version))
		w.Key("lastContainedLogTimestamp")
		w.Int(c.LastContainedLogTimestamp)
	case *record.SnapshotFooter:
		w.Key("version")
		w.Int(int64(c.Version))
	}
	w.End()
}

// kraftVersionJSON reads a KRaftVersionRecord (version, kraft.version,
// then tagged fields, none known) as KRaftVersionRecordJsonConverter
// prints it.
func kraftVersionJSON(w *record.JSONWriter, v []byte) error {
	if len(v) < 5 {
		return fmt.Errorf("%w: KRaftVersionRecord of %d bytes", record.ErrMalformed, len(v))
	}
	version := int16(binary.BigEndian.Uint16(v))
	level := int16(binary.BigEndian.Uint16(v[2:]))
	if version != 0 || v[4] != 0 || len(v) != 5 {
		return fmt.Errorf("%w: KRaftVersionRecord version %d with %d byte(s) of tagged fields", record.ErrUnknown, version, len(v)-4)
	}
	w.Begin()
	w.Key("version")
	w.Int(int64(version))
	w.Key("kRaftVersion")
	w.Int(int64(level))
	w.End()
	return nil
}

// votersJSON is VotersRecordJsonConverter.write.
func votersJSON(w *record.JSONWriter, c *record.Voters) {
	w.Begin()
	w.Key("version")
	w.Int(int64(c.Version))
	w.Key("voters")
	w.BeginArray()
	for _, v := range c.Voters {
		w.Begin()
		w.Key("voterId")
		w.Int(int64(v.ID))
		w.Key("voterDirectoryId")
		w.String(record.Uuid(v.DirectoryID).String())
		w.Key("endpoints")
		w.BeginArray()
		for _, e := range v.Endpoints {
			w.Begin()
			w.Key("name")
			w.String(e.Name)
			w.Key("host")
			w.String(e.Host)
			w.Key("port")
			w.Int(int64(e.Port))
			w.End()
		}
		w.EndArray()
		w.Key("kRaftVersionFeature")
		w.Begin()
		w.Key("minSupportedVersion")
		w.Int(int64(v.MinVersion))
		w.Key("maxSupportedVersion")
		w.Int(int64(v.MaxVersion))
		w.End()
		w.End()
	}
	w.EndArray()
	w.End()
}
