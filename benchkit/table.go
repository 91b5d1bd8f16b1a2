package benchkit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the report for people: the machine, the systems, the
// floors, then one section per flush policy (never mixed in one figure)
// with a row per case and system, and ratio columns against the reference
// system.
func WriteTable(w io.Writer, rep Report) error {
	m := rep.Machine
	cpu := m.CPU
	if cpu == "" {
		cpu = "unknown CPU"
	}
	fmt.Fprintf(w, "kraftlab bench quorum: 3 voters in one process over loopback TCP\n")
	fmt.Fprintf(w, "%s %s/%s, %d CPUs (%s), GOMAXPROCS %d\n", m.GoVersion, m.OS, m.Arch, m.NumCPU, cpu, m.GOMAXPROCS)
	fmt.Fprintf(w, "each case: a fresh cluster, %v warm-up, %v measured; MB = 10^6 bytes of record payload\n",
		rep.Config.Warmup, rep.Config.Window)
	for _, f := range rep.Config.Systems {
		if f.About != "" {
			fmt.Fprintf(w, "%s: %s\n", f.Name, f.About)
		}
	}
	fmt.Fprintln(w)

	fl := rep.Floors
	fmt.Fprintf(w, "floor: loopback TCP round trip, 64 B ping-pong   p50 %-8s p99 %-8s (%d round trips)\n",
		fmtDur(fl.RTT.P50), fmtDur(fl.RTT.P99), fl.RTT.Count)
	fmt.Fprintf(w, "floor: 4 KiB write + fdatasync in %s   p50 %-8s p99 %-8s (%d syncs)\n",
		rep.Config.Dir, fmtDur(fl.Fsync.P50), fmtDur(fl.Fsync.P99), fl.Fsync.Count)
	if fl.MajorityFsync.Count > 0 {
		fmt.Fprintf(w, "floor: %d of them at once, one file each, until %d have synced (the voters share this disk)   p50 %-8s p99 %-8s (%d rounds)\n",
			DefaultVoters, DefaultVoters/2+1, fmtDur(fl.MajorityFsync.P50), fmtDur(fl.MajorityFsync.P99), fl.MajorityFsync.Count)
	}
	fmt.Fprintf(w, "cpu µs/rec, proc cores: the whole process's CPU (3 voters and the writers together: they share one process, and Go cannot measure CPU per goroutine, so not per voter) per committed record and per second of the window\n")
	fmt.Fprintf(w, "busy, iowait: share of all %d cores' time over the window from /proc/stat, other processes included; busy near 100%% means CPU-bound, high iowait disk-bound, both low waiting\n", m.NumCPU)
	for _, o := range fl.OpenLoop {
		fmt.Fprintf(w, "floor: open-loop scheduler alone at %d/s (records commit instantly)   p50 %-8s p99 %-8s (%d records)\n",
			o.Rate, fmtDur(o.Latency.P50), fmtDur(o.Latency.P99), o.Latency.Count)
	}

	// Ratio columns only mean something with another system to compare.
	systems := map[string]bool{}
	for _, r := range rep.Results {
		systems[r.System] = true
	}
	compared := len(systems) > 1

	for _, durable := range []bool{false, true} {
		var rows []Result
		for _, r := range rep.Results {
			if r.Flush == flushName(durable) {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		floorName := "loopback round trip"
		if durable {
			floorName = "fsync"
		}
		header := "size\tload\tsystem\trec/s\tMB/s\tp50\tp99\tp99.9\t×floor\tcpu µs/rec\tproc cores\tbusy\tiowait\tallocs/rec\terrors\t"
		if compared {
			fmt.Fprintf(w, "\nflush %s  (×floor = p50 ÷ %s p50;  ÷ columns = %s ÷ this row: above 1 for rec/s, below 1 for p50, p99, cpu favours %s)\n",
				flushName(durable), floorName, rep.Reference, rep.Reference)
			header += "÷rec/s\t÷p50\t÷p99\t÷cpu\t"
		} else {
			fmt.Fprintf(w, "\nflush %s  (×floor = p50 ÷ %s p50)\n", flushName(durable), floorName)
		}
		tw := newTabWriter(w)
		fmt.Fprintln(tw, header)
		for _, r := range rows {
			cells := []string{fmtSize(r.RecordBytes), r.key().Load.String(), r.System}
			if r.Error != "" {
				cells = append(cells, "failed")
				fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t  "+r.Error)
				continue
			}
			cpu := "-"
			if r.CPUSecondsPerRecord != nil {
				cpu = strconv.FormatFloat(*r.CPUSecondsPerRecord*1e6, 'f', 1, 64)
			}
			cores, busy, iowait := "-", "-", "-"
			if r.ProcessCores != nil {
				cores = strconv.FormatFloat(*r.ProcessCores, 'f', 2, 64)
			}
			if r.Machine != nil {
				busy, iowait = fmtPercent(r.Machine.Busy), fmtPercent(r.Machine.IOWait)
			}
			cells = append(cells,
				strconv.FormatFloat(r.RecordsPerSec, 'f', 0, 64),
				strconv.FormatFloat(r.MBPerSec, 'f', 2, 64),
				fmtDur(r.Latency.P50), fmtDur(r.Latency.P99), fmtDur(r.Latency.P999),
				fmtRatio(r.LatencyOverFloor),
				cpu, cores, busy, iowait,
				strconv.FormatFloat(r.AllocsPerRecord, 'f', 1, 64),
				strconv.FormatInt(r.Errors, 10),
			)
			switch v := r.VsReference; {
			case !compared:
			case v != nil:
				cells = append(cells, fmtRatio(v.RecordsPerSec), fmtRatio(v.P50), fmtRatio(v.P99), fmtRatio(v.CPUPerRecord))
			case r.System == rep.Reference:
				cells = append(cells, "ref", "ref", "ref", "ref")
			default:
				cells = append(cells, "-", "-", "-", "-")
			}
			line := strings.Join(cells, "\t") + "\t"
			if r.FirstError != "" {
				line += "  first error: " + r.FirstError
			}
			fmt.Fprintln(tw, line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// fmtDur prints a latency with three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return sig3(float64(d)/float64(time.Microsecond)) + "µs"
	case d < time.Second:
		return sig3(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return sig3(d.Seconds()) + "s"
	}
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func fmtRatio(v float64) string {
	if v <= 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

func fmtPercent(v float64) string {
	return strconv.FormatFloat(v*100, 'f', 0, 64) + "%"
}

func fmtSize(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// newTabWriter aligns a table's cells to the right, two spaces apart.
func newTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}
