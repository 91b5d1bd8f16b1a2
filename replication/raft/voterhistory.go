package raft

import (
	"fmt"

	"github.com/kraftlab/kraftlab/storage"
)

// voterHistory is what the log says of the quorum itself (Kafka's
// KRaftControlRecordStateMachine with its VoterSetHistory): each
// VotersRecord and KRaftVersionRecord at its offset, from the snapshot the
// log starts from (at the snapshot's last contained offset) and from the
// log, committed or not. The latest entry is in force as soon as it is
// appended; a truncation of the log drops the entries it cut, so the set
// in force goes back with it. Without any VotersRecord the static voters
// (Config.Voters) are in force.
type voterHistory struct {
	static   VoterSet
	sets     []voterEntry
	versions []versionEntry
}

type voterEntry struct {
	offset int64
	set    VoterSet
}

type versionEntry struct {
	offset  int64
	version KRaftVersion
}

// last is the voter set in force.
func (h *voterHistory) last() VoterSet {
	if len(h.sets) == 0 {
		return h.static
	}
	return h.sets[len(h.sets)-1].set
}

// lastOffset is the offset of the VotersRecord in force, -1 when the
// static voters are.
func (h *voterHistory) lastOffset() int64 {
	if len(h.sets) == 0 {
		return -1
	}
	return h.sets[len(h.sets)-1].offset
}

// at is the voter set in force at offset: the latest VotersRecord at or
// before it, and that record's offset (-1 with the static voters).
func (h *voterHistory) at(offset int64) (VoterSet, int64) {
	for i := len(h.sets) - 1; i >= 0; i-- {
		if h.sets[i].offset <= offset {
			return h.sets[i].set, h.sets[i].offset
		}
	}
	return h.static, -1
}

// kraftVersion is the kraft.version in force (0 without a record).
func (h *voterHistory) kraftVersion() KRaftVersion {
	if len(h.versions) == 0 {
		return KRaftVersion0
	}
	return h.versions[len(h.versions)-1].version
}

func (h *voterHistory) kraftVersionAt(offset int64) KRaftVersion {
	for i := len(h.versions) - 1; i >= 0; i-- {
		if h.versions[i].offset <= offset {
			return h.versions[i].version
		}
	}
	return KRaftVersion0
}

func (h *voterHistory) addSet(offset int64, s VoterSet) {
	for len(h.sets) > 0 && h.sets[len(h.sets)-1].offset >= offset {
		h.sets = h.sets[:len(h.sets)-1]
	}
	h.sets = append(h.sets, voterEntry{offset, s})
}

func (h *voterHistory) addVersion(offset int64, v KRaftVersion) {
	for len(h.versions) > 0 && h.versions[len(h.versions)-1].offset >= offset {
		h.versions = h.versions[:len(h.versions)-1]
	}
	h.versions = append(h.versions, versionEntry{offset, v})
}

// truncateNew drops the entries at or past end (a log truncation).
func (h *voterHistory) truncateNew(end int64) {
	for len(h.sets) > 0 && h.sets[len(h.sets)-1].offset >= end {
		h.sets = h.sets[:len(h.sets)-1]
	}
	for len(h.versions) > 0 && h.versions[len(h.versions)-1].offset >= end {
		h.versions = h.versions[:len(h.versions)-1]
	}
}

// truncateOld drops the entries a log start at start no longer needs: all
// but the latest at or before it, which stays in force.
func (h *voterHistory) truncateOld(start int64) {
	keep := func(n int, offset func(int) int64) int {
		i := 0
		for i+1 < n && offset(i+1) <= start {
			i++
		}
		return i
	}
	if len(h.sets) > 0 {
		i := keep(len(h.sets), func(i int) int64 { return h.sets[i].offset })
		h.sets = h.sets[i:]
	}
	if len(h.versions) > 0 {
		i := keep(len(h.versions), func(i int) int64 { return h.versions[i].offset })
		h.versions = h.versions[i:]
	}
}

func (h *voterHistory) clear() { h.sets, h.versions = nil, nil }

// scan adds the control records of whole batches, as offsets of the log;
// at, when not negative, puts every record at that offset instead (a
// snapshot's control records are in force at its last contained offset).
func (h *voterHistory) scan(data []byte, at int64) error {
	err := storage.ControlBatches(data, func(b *storage.Batch) error {
		recs, err := b.Records()
		if err != nil {
			return err
		}
		for _, r := range recs {
			off := r.Offset
			if at >= 0 {
				off = at
			}
			if err := h.apply(off, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read voter records: %w", err)
	}
	return nil
}

func (h *voterHistory) apply(offset int64, r storage.Record) error {
	t, err := storage.ControlType(r)
	if err != nil {
		return err
	}
	switch t {
	case storage.ControlVoters:
		v, err := storage.ParseVoters(r)
		if err != nil {
			return err
		}
		h.addSet(offset, votersFromRecord(v))
	case storage.ControlKRaftVersion:
		v, err := storage.ParseKRaftVersion(r)
		if err != nil {
			return err
		}
		h.addVersion(offset, KRaftVersion(v))
	}
	return nil
}
