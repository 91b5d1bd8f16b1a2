package partition

import (
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/storage"
)

// Damage is what a replica found gone from its log when it opened: records
// it had made durable that its files no longer hold. A crash never does
// that — an acknowledged record is flushed on every in-sync replica before
// the acknowledgement, and a kill loses only what was not flushed — so it
// is a damaged or truncated file (a flipped byte, a disk error, a file
// cut by hand). Such a replica must not lead, nor be taken for the truth
// by followers that would truncate to it, while another replica may hold
// the records; it recovers by fetching them (see the package
// documentation).
type Damage struct {
	// From is the first offset lost: the log end the replica opened at.
	From int64
	// To is the end of what the evidence shows the log held (exclusive):
	// offsets From to To-1 are gone, and more may be unless Exact.
	To    int64
	Exact bool
	// Evidence says, a sentence each, what shows the loss.
	Evidence []string
	// SetAside names the damaged files kept for inspection beside the
	// log, with a .corrupt suffix.
	SetAside []string
}

// String describes the damage in one line.
func (d Damage) String() string {
	n := "at least "
	if d.Exact {
		n = ""
	}
	recs := "records"
	if d.To-d.From == 1 {
		recs = "record"
	}
	s := fmt.Sprintf("offsets %d-%d lost (%s%d %s): %s", d.From, d.To-1, n, d.To-d.From, recs, strings.Join(d.Evidence, "; "))
	if len(d.SetAside) > 0 {
		s += "; kept as " + strings.Join(d.SetAside, ", ")
	}
	return s
}

// findDamage compares what opening the log found with the recovery point
// the caller checkpointed, and reports records the replica lost.
func findDamage(rec storage.RecoveryReport, leo, recoveryPoint int64) (Damage, bool) {
	d := Damage{From: leo, To: leo, Exact: true, SetAside: rec.SetAside}
	if rec.LostRecords() {
		d.To, d.Exact = leo+rec.Lost, rec.LostExact
		d.Evidence = append(d.Evidence, rec.LostEvidence...)
	}
	if recoveryPoint > leo {
		d.Evidence = append(d.Evidence, fmt.Sprintf("%s says offsets below %d were flushed, but the log ends at %d",
			RecoveryPointCheckpoint, recoveryPoint, leo))
		if recoveryPoint > d.To {
			d.To = recoveryPoint
		}
		d.Exact = false
	}
	return d, d.To > d.From
}

// RecoveryPointCheckpoint is the file in a log directory holding every
// replica's recovery point, as Kafka names it.
const RecoveryPointCheckpoint = "recovery-point-offset-checkpoint"
