package benchkit

import (
	"fmt"
	"io"
	"strings"
)

// WriteMetadataTable prints what `bench metadata` measured, one table per
// part that ran.
func WriteMetadataTable(w io.Writer, rep MetadataReport) error {
	if len(rep.Propagation) > 0 {
		if err := writePropagation(w, rep.Propagation); err != nil {
			return err
		}
	}
	if len(rep.Scale) > 0 {
		if err := writeScale(w, rep.Scale); err != nil {
			return err
		}
	}
	if len(rep.Failover) > 0 {
		if err := writeMetaFailover(w, rep.Failover); err != nil {
			return err
		}
	}
	return nil
}

func writePropagation(w io.Writer, ps []Propagation) error {
	p0 := ps[0]
	fmt.Fprintf(w, "propagation: 3 controllers and %d brokers in one process over loopback TCP, profile %s; each change is a CreateTopics of a 1-partition topic sent to the active controller, one at a time, after the metadata was filled with the partitions listed\n",
		p0.Brokers, p0.Profile)
	fmt.Fprintf(w, "from the commit (the active controller's own loader publishing the change, handed over once the leader's high watermark passes it) to the last broker's loader publishing it (all), to each broker's (each); spread = last − first broker; answer = CreateTopics sent → answered\n\n")
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "partitions\tchanges\tfill\tall p50\tp99\tmax\teach p50\tp99\tspread p50\tp99\tanswer p50\tfastest broker p50\tslowest broker p50\t")
	for _, p := range ps {
		line := fmt.Sprintf("%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s (%d)\t%s (%d)\t", p.Partitions, p.Changes, fmtDur(p.Fill),
			fmtDur(p.AllBrokers.P50), fmtDur(p.AllBrokers.P99), fmtDur(p.AllBrokers.Max),
			fmtDur(p.EachBroker.P50), fmtDur(p.EachBroker.P99), fmtDur(p.BrokerSpread.P50), fmtDur(p.BrokerSpread.P99),
			fmtDur(p.Answer.P50), fmtDur(p.FastestBrokerP50), p.FastestBroker, fmtDur(p.SlowestBrokerP50), p.SlowestBroker)
		if p.Error != "" {
			line += "  " + p.Error
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, p := range ps {
		verdict := "met"
		if p.AllBrokers.P99 >= p.Aim || p.Changes == 0 {
			verdict = "not met"
		}
		fmt.Fprintf(w, "aim at %d partitions: commit → all %d brokers p99 under %s: %s\n", p.Partitions, p.Brokers, fmtDur(p.Aim), verdict)
	}
	if last := ps[len(ps)-1]; len(last.ControllerChanges) > 0 {
		fmt.Fprintf(w, "the active controller changed during the run (the fill and the changes went on through the next one): %s\n", strings.Join(last.ControllerChanges, "; "))
	}
	fmt.Fprintln(w)
	return nil
}

func writeScale(w io.Writer, rs []Scale) error {
	fmt.Fprintf(w, "scale: real metadata loaders in this process, one per broker, each fed the same snapshot, then one PartitionChangeRecord batch at a time handed to all of them at once (each on its own goroutine, as each broker's raft loop is); no sockets\n")
	fmt.Fprintf(w, "image = live heap of one image (HeapAlloc after GC, before and after building it); write = image.Records + encode; load = Loader.HandleLoadSnapshot (decode, replay, apply)\n\n")
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "partitions\ttopics\tloaders\timage\tB/partition\tsnapshot\twrite\tload p50\tload max\tchanges\tchange on all p50\tp99\tmax\ton one p50\tp99\t")
	for _, s := range rs {
		line := fmt.Sprintf("%d\t%d\t%d\t%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t",
			s.Partitions, s.Topics, s.Loaders, fmtBytes(s.ImageBytes), s.BytesPerPartition, fmtBytes(uint64(s.SnapshotBytes)),
			fmtDur(s.SnapshotWrite), fmtDur(s.SnapshotLoad.P50), fmtDur(s.SnapshotLoad.Max), s.Changes,
			fmtDur(s.ChangeAll.P50), fmtDur(s.ChangeAll.P99), fmtDur(s.ChangeAll.Max), fmtDur(s.ChangeOne.P50), fmtDur(s.ChangeOne.P99))
		if s.Error != "" {
			line += "  " + s.Error
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, s := range rs {
		if s.LoadersBound != "" {
			fmt.Fprintf(w, "at %d partitions: %s\n", s.Partitions, s.LoadersBound)
		}
	}
	fmt.Fprintf(w, "aims: one change on every loader under %s p99 at 100,000 partitions; a 1,000,000-partition snapshot loads under %s\n\n",
		fmtDur(propagationAim), fmtDur(snapshotLoadAim))
	return nil
}

func writeMetaFailover(w io.Writer, rs []MetaFailover) error {
	fmt.Fprintf(w, "controller failover: 3 controllers and a few brokers; the active controller is killed (as kill -9) and restarted after each round\n")
	fmt.Fprintf(w, "elected → active = from the new leader's election (its raft event) to its quorum controller's EventActivated; elected → CreateTopics = to that controller's first successful CreateTopics answer (one append linger and a commit); activation = the controller's own EventActivated Took\n\n")
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "profile\tpartitions\tbrokers\trounds\tfill\telected → active p50\tmax\telected → CreateTopics p50\tp99\tmax\tactivation p50\tmax\tkill → CreateTopics p50\tmax\t")
	for _, f := range rs {
		line := fmt.Sprintf("%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", f.Profile, f.Partitions, f.Brokers, f.Rounds, fmtDur(f.Fill),
			fmtDur(f.ElectionToActive.P50), fmtDur(f.ElectionToActive.Max),
			fmtDur(f.ElectionToCreate.P50), fmtDur(f.ElectionToCreate.P99), fmtDur(f.ElectionToCreate.Max),
			fmtDur(f.Activation.P50), fmtDur(f.Activation.Max), fmtDur(f.KillToCreate.P50), fmtDur(f.KillToCreate.Max))
		if f.Error != "" {
			line += "  " + f.Error
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwith n rounds p99 is the nearest-rank sample: the largest for n < 100\n")
	return nil
}
