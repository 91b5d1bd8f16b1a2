package interop

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kraftlab/kraftlab/benchkit"
)

// WritePeerTable prints the comparison: per produce case a row per system
// and a ratio row (kraftlab ÷ Kafka: above 1 favours kraftlab for
// records/s and MB/s, below 1 for latencies and CPU), then propagation and
// failover the same way.
func WritePeerTable(w io.Writer, cfg PeerConfig, rep PeerReport) error {
	fmt.Fprintf(w, "peers: %d controllers and %d brokers on each system, separate roles, over loopback; one system running at a time; loopback TCP %.0f MB/s\n", cfg.Controllers, cfg.Brokers, rep.LoopbackMBPerSec)
	for _, s := range rep.Systems {
		fmt.Fprintf(w, "  %s: %s; ready in %.1f s\n", s.System, s.Setup, s.StartSeconds)
	}
	kafka := rep.system(SystemKafka)
	if cfg.has(PartProduce) {
		fmt.Fprintf(w, "\nproduce: per case a fresh topic of %d partitions, replication factor %d; franz-go producer (linger 0, idempotent under acks=all, %s warm-up discarded) and consumer in this process for %v; end to end = handed to the producer -> read by the consumer; CPU = the system's processes only (/proc/PID/stat user+system, every thread: the kraftlab up process; the %d Kafka JVMs), per produced MB\n\n",
			cfg.Partitions, min(3, cfg.Brokers), cfg.Warmup, cfg.Duration, cfg.Controllers+cfg.Brokers)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "size\tacks\tsystem\trecords/s\tMB/s\tproduce p50\tend to end p50\tp99\tCPU/MB\t")
		for i, acks := range cfg.Acks {
			for j, size := range cfg.Sizes {
				k := i*len(cfg.Sizes) + j
				var kc *benchkit.ProduceCase
				if kafka != nil && k < len(kafka.Produce) {
					kc = &kafka.Produce[k]
				}
				for _, s := range rep.Systems {
					if k >= len(s.Produce) {
						fmt.Fprintf(tw, "%d B\t%s\t%s\t%s\t\t\t\t\t\t\n", size, acks, s.System, "error")
						continue
					}
					c := s.Produce[k]
					fmt.Fprintf(tw, "%d B\t%s\t%s\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t\n", size, acks, s.System, c.RecordsPerSec, c.MBPerSec,
						fmtD(c.Produce.P50), fmtD(c.EndToEnd.P50), fmtD(c.EndToEnd.P99), fmtD(c.CPUPerMB))
					if s.System == SystemKafka || kc == nil {
						continue
					}
					fmt.Fprintf(tw, "\t\t%s ÷ kafka\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.System,
						ratio(c.RecordsPerSec, kc.RecordsPerSec), ratio(c.MBPerSec, kc.MBPerSec),
						ratioD(c.Produce.P50, kc.Produce.P50), ratioD(c.EndToEnd.P50, kc.EndToEnd.P50),
						ratioD(c.EndToEnd.P99, kc.EndToEnd.P99), ratioD(c.CPUPerMB, kc.CPUPerMB))
				}
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if cfg.has(PartPropagation) || cfg.has(PartFailover) {
		fmt.Fprintf(w, "\nmetadata: propagation = CreateTopics (1 partition, replication factor %d) sent to the active controller -> the last broker's Metadata answer giving it a leader, %d changes one at a time, each broker polled with %v between polls (resolution: that gap plus one poll's round trip); failover = just before killing the active controller (SIGKILL; kraftlab's control-API kill, its round trip included) -> the first CreateTopics a surviving controller answers, tried on each in turn %v apart, %d kills\n\n",
			min(3, cfg.Brokers), cfg.Changes, propagationPollGap, failoverRetryGap, cfg.FailoverRounds)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "system\tchanges\tall brokers p50\tp99\tCreateTopics answer p50\tpoll round trip p50\tkills\tkill -> CreateTopics p50\tmin\tmax\t")
		for _, s := range rep.Systems {
			if s.Propagation == nil && s.Failover == nil {
				continue
			}
			prop, fo := s.Propagation, s.Failover
			if prop == nil {
				prop = &PeerPropagation{}
			}
			if fo == nil {
				fo = &PeerFailover{}
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", s.System, prop.Changes, fmtD(prop.AllBrokers.P50), fmtD(prop.AllBrokers.P99),
				fmtD(prop.Answer.P50), fmtD(prop.PollRoundTrip.P50), fo.Rounds, fmtD(fo.KillToCreate.P50), fmtD(fo.KillToCreate.Min), fmtD(fo.KillToCreate.Max))
			if s.System == SystemKafka || kafka == nil || kafka.Propagation == nil || kafka.Failover == nil {
				continue
			}
			kp, kf := kafka.Propagation, kafka.Failover
			fmt.Fprintf(tw, "%s ÷ kafka\t\t%s\t%s\t%s\t\t\t%s\t\t\t\n", s.System, ratioD(prop.AllBrokers.P50, kp.AllBrokers.P50), ratioD(prop.AllBrokers.P99, kp.AllBrokers.P99),
				ratioD(prop.Answer.P50, kp.Answer.P50), ratioD(fo.KillToCreate.P50, kf.KillToCreate.P50))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var errs []string
	for _, s := range rep.Systems {
		if s.Error != "" {
			errs = append(errs, fmt.Sprintf("%s: %s", s.System, s.Error))
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "\nerrors:\n  %s\n", strings.Join(errs, "\n  "))
	}
	return nil
}

func (r PeerReport) system(s PeerSystem) *PeerSystemReport {
	for i := range r.Systems {
		if r.Systems[i].System == s {
			return &r.Systems[i]
		}
	}
	return nil
}

// fmtD prints a duration with three significant digits; zero is "-" (not
// measured).
func fmtD(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func ratioD(a, b time.Duration) string { return ratio(float64(a), float64(b)) }
