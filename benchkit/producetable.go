package benchkit

import (
	"fmt"
	"io"
)

// produceAim is the aim for acks=all at 1 KiB: a quarter of the
// loopback ceiling.
const produceAim = 0.25

// WriteProduceTable prints what `bench produce` measured.
func WriteProduceTable(w io.Writer, cfg ProduceConfig, rep ProduceReport) error {
	fmt.Fprintf(w, "produce: 3 controllers and %d brokers in one process over loopback TCP, profile %s (partition logs flush %s); each case a fresh topic of %d partitions, replication factor %d, franz-go producer (linger 0, idempotent under acks=all) and consumer\n",
		cfg.Brokers, cfg.Profile, cfg.Settings.Flush, cfg.Partitions, min(3, cfg.Brokers))
	fmt.Fprintf(w, "loopback TCP, one connection, 1 MiB writes: %.0f MB/s (the ceiling); produce = handed to the client → acknowledged; end to end = handed to the client → read by the consumer (up to the high watermark); CPU = this process's, everything included, per produced MB\n\n", rep.LoopbackMBPerSec)
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "size\tacks\trecords\trecords/s\tMB/s\tof loopback\tproduce p50\tp99\tend to end p50\tp99\tCPU/MB\t")
	for _, c := range rep.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.1f%%\t%s\t%s\t%s\t%s\t%s\t\n", fmtSize(c.RecordBytes), c.Acks, c.Records,
			sig3(c.RecordsPerSec), sig3(c.MBPerSec), 100*c.OfLoopback,
			fmtDur(c.Produce.P50), fmtDur(c.Produce.P99), fmtDur(c.EndToEnd.P50), fmtDur(c.EndToEnd.P99), fmtDur(c.CPUPerMB))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range rep.Cases {
		if c.Acks == AcksAll && c.RecordBytes == 1024 {
			verdict := "met"
			if c.OfLoopback < produceAim {
				verdict = "not met"
			}
			fmt.Fprintf(w, "\naim: acks=all at 1 KiB reaches %.0f%% of the loopback ceiling: %.1f%%, %s\n", 100*produceAim, 100*c.OfLoopback, verdict)
		}
	}
	if cu := rep.CatchUp; cu != nil {
		fmt.Fprintf(w, "\ncatch-up: a stopped follower of a 1-partition topic comes back %s behind; hosting its replica again took %.2f s (registration, unfencing, metadata), then it replicated at %s MB/s (%.2f s), %s CPU per replicated MB (the leader serving fetches and the follower's fetcher appending)\n",
			fmtSize(int(cu.Bytes)), cu.StartSeconds, sig3(cu.MBPerSec), cu.Seconds, fmtDur(cu.CPUPerMB))
	}
	return nil
}
