package record

import (
	"errors"
	"fmt"

	"github.com/kraftlab/kraftlab/storage"
)

// Control is a control record the quorum writes: *LeaderChange,
// *SnapshotHeader, *SnapshotFooter, and in a dynamic quorum
// (kraft.version 1) *KRaftVersion and *Voters.
type Control interface {
	// Record is the control record as storage encodes it (key and value).
	Record() storage.Record
}

// LeaderChange is the LeaderChangeMessage a new leader writes first in its
// epoch (control type 2). Version 1 adds voter directory ids (KIP-853),
// which a static quorum does not have; DecodeControl reads both versions
// and drops the directory ids.
type LeaderChange struct {
	Version        int16
	LeaderID       int32
	Voters         []int32
	GrantingVoters []int32
}

// Record encodes the message with storage.LeaderChangeRecord (version 0).
func (c *LeaderChange) Record() storage.Record {
	return storage.LeaderChangeRecord(c.LeaderID, c.Voters, c.GrantingVoters)
}

// SnapshotHeader opens a snapshot (SnapshotHeaderRecord, control type 3).
type SnapshotHeader struct {
	Version                   int16
	LastContainedLogTimestamp int64
}

// Record encodes the header with storage.SnapshotHeaderRecord.
func (c *SnapshotHeader) Record() storage.Record {
	return storage.SnapshotHeaderRecord(c.LastContainedLogTimestamp)
}

// SnapshotFooter closes a snapshot (SnapshotFooterRecord, control type 4).
type SnapshotFooter struct {
	Version int16
}

// Record encodes the footer with storage.SnapshotFooterRecord.
func (c *SnapshotFooter) Record() storage.Record { return storage.SnapshotFooterRecord() }

// KRaftVersion is the KRaftVersionRecord (control type 5): the
// kraft.version the quorum finalized, 1 for a dynamic voter set.
type KRaftVersion struct {
	Version      int16
	KRaftVersion int16
}

// Record encodes the record with storage.KRaftVersionRecord.
func (c *KRaftVersion) Record() storage.Record { return storage.KRaftVersionRecord(c.KRaftVersion) }

// Voters is the VotersRecord (control type 6): a dynamic quorum's whole
// voter set, in force from its offset on.
type Voters struct {
	Version int16
	Voters  []storage.VoterRecord
}

// Record encodes the record with storage.VotersRecord.
func (c *Voters) Record() storage.Record {
	return storage.VotersRecord(storage.VotersRecordValue{Version: c.Version, Voters: c.Voters})
}

// DecodeControl reads a control record of a control batch: its key names
// the type, its value is the message (a flexible struct led by its own
// int16 Version field, with no metadata framing). Types other than the
// five the quorum writes (transaction markers) are ErrUnknown.
func DecodeControl(rec storage.Record) (Control, error) {
	t, err := storage.ControlType(rec)
	if err != nil {
		return nil, fmt.Errorf("%w: control record key: %v", ErrMalformed, err)
	}
	switch t {
	case storage.ControlLeaderChange:
		m, err := storage.ParseLeaderChange(rec)
		if err != nil {
			return nil, fmt.Errorf("%w: LeaderChangeMessage: %v", ErrMalformed, err)
		}
		c := &LeaderChange{Version: m.Version, LeaderID: m.LeaderID}
		for _, v := range m.Voters {
			c.Voters = append(c.Voters, v.VoterID)
		}
		for _, v := range m.GrantingVoters {
			c.GrantingVoters = append(c.GrantingVoters, v.VoterID)
		}
		return c, nil
	case storage.ControlSnapshotHeader:
		rd := reader{b: rec.Value}
		c := &SnapshotHeader{Version: rd.int16(), LastContainedLogTimestamp: rd.int64()}
		rd.noTags()
		if err := controlErr("SnapshotHeaderRecord", &rd, c.Version); err != nil {
			return nil, err
		}
		return c, nil
	case storage.ControlSnapshotFooter:
		rd := reader{b: rec.Value}
		c := &SnapshotFooter{Version: rd.int16()}
		rd.noTags()
		if err := controlErr("SnapshotFooterRecord", &rd, c.Version); err != nil {
			return nil, err
		}
		return c, nil
	case storage.ControlKRaftVersion:
		v, err := storage.ParseKRaftVersion(rec)
		if err != nil {
			return nil, quorumErr(err)
		}
		return &KRaftVersion{KRaftVersion: v}, nil
	case storage.ControlVoters:
		v, err := storage.ParseVoters(rec)
		if err != nil {
			return nil, quorumErr(err)
		}
		return &Voters{Version: v.Version, Voters: v.Voters}, nil
	}
	return nil, fmt.Errorf("%w: control record type %d", ErrUnknown, int16(t))
}

// quorumErr sorts storage's errors for the kraft.version 1 records into
// ErrUnknown (a version Kafka does not define) and ErrMalformed.
func quorumErr(err error) error {
	if errors.Is(err, storage.ErrControlVersion) {
		return fmt.Errorf("%w: %v", ErrUnknown, err)
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

func controlErr(name string, rd *reader, v int16) error {
	switch {
	case rd.err != nil:
		return fmt.Errorf("%w: %s: %v", ErrMalformed, name, rd.err)
	case len(rd.b) > 0:
		return fmt.Errorf("%w: %s: %d byte(s) of garbage after the record", ErrMalformed, name, len(rd.b))
	case v != 0:
		return fmt.Errorf("%w: %s version %d (only 0 exists)", ErrUnknown, name, v)
	}
	return nil
}
