package partition

import (
	"fmt"
	"strings"

	"github.com/kraftlab/kraftlab/internal/transcript"
	"github.com/kraftlab/kraftlab/storage"
)

// How the replica transcripts print batches, replicas and producers.

// batchList prints raw batches as (first-last:eEPOCH ...).
func batchList(raw []byte) string {
	var b []string
	for pos := 0; pos < len(raw); {
		base, last, epoch, size, err := storage.PeekBatch(raw[pos:])
		if err != nil {
			b = append(b, "<"+err.Error()+">")
			break
		}
		b = append(b, fmt.Sprintf("%d-%d:e%d", base, last, epoch))
		pos += size
	}
	return "(" + strings.Join(b, " ") + ")"
}

// stateLines prints a replica's state; with followers, the leader's view
// of each follower too.
func (s *ptScript) stateLines(id int32, followers bool) transcript.Lines {
	st := s.replicas[id].State()
	var out transcript.Lines
	line := fmt.Sprintf("replica %d: %s", id, st.Role)
	if st.Role == RoleFollower {
		line += fmt.Sprintf(" of %d", st.LeaderID)
	}
	line += fmt.Sprintf(" leaderEpoch=%d partitionEpoch=%d leo=%d hwm=%d", st.LeaderEpoch, st.PartitionEpoch, st.LogEndOffset, st.HighWatermark)
	if st.LogStartOffset > 0 {
		line += fmt.Sprintf(" logStart=%d", st.LogStartOffset)
	}
	if st.Role == RoleLeader {
		line += " isr=" + transcript.IDs(st.ISR)
		if st.Pending != nil {
			line += fmt.Sprintf(" pending=%s%s maximalIsr=%s", st.Pending.Kind, transcript.IDs(st.Pending.ISR), transcript.IDs(st.MaximalISR))
		}
	}
	out.Addf("%s", line)
	if !followers || st.Role != RoleLeader {
		return out
	}
	for _, f := range st.Followers {
		l := fmt.Sprintf("  follower %d: leo=%d", f.ReplicaID, f.LogEndOffset)
		if !f.LastCaughtUpTime.IsZero() {
			l += " lastCaughtUp=" + s.clock.At(f.LastCaughtUpTime)
		}
		if !f.LastFetchTime.IsZero() {
			l += " lastFetch=" + s.clock.At(f.LastFetchTime)
		}
		out.Addf("%s", l)
	}
	return out
}

// logLine prints a replica's batches and epochs.
func (s *ptScript) logLine(id int32) string {
	p := s.replicas[id]
	p.mu.Lock()
	defer p.mu.Unlock()
	var raw []byte
	for at := p.log.LogStartOffset(); at < p.log.LogEndOffset(); {
		b, err := p.log.Read(at, 1<<20)
		if err != nil {
			s.t.Fatalf("read replica %d at %d: %v", id, at, err)
		}
		next := at
		for pos := 0; pos < len(b); {
			_, last, _, size, err := storage.PeekBatch(b[pos:])
			if err != nil {
				break
			}
			next, pos = last+1, pos+size
		}
		if next == at {
			s.t.Fatalf("read replica %d at %d: no whole batch", id, at)
		}
		raw, at = append(raw, b...), next
	}
	var epochs []string
	for _, e := range p.log.Epochs() {
		epochs = append(epochs, fmt.Sprintf("%d@%d", e.Epoch, e.StartOffset))
	}
	return fmt.Sprintf("log %d: %s epochs=(%s)", id, batchList(raw), strings.Join(epochs, " "))
}

func (s *ptScript) producersOf(id int32) string {
	var out transcript.Lines
	for _, e := range s.replicas[id].Producers() {
		var b []string
		for _, m := range e.Batches {
			b = append(b, fmt.Sprintf("seq %d-%d@%d-%d", m.FirstSeq, m.LastSeq, m.FirstOffset, m.LastOffset))
		}
		out.Addf("producer %d epoch=%d batches=(%s)", e.ProducerID, e.ProducerEpoch, strings.Join(b, " "))
	}
	if len(out) == 0 {
		return "(no producers)\n"
	}
	return out.String()
}
