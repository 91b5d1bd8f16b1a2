package benchkit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func sampleReport() Report {
	cpu := func(v float64) *float64 { return &v }
	res := func(sys, flush string, rps float64, p50 time.Duration, c float64) Result {
		return Result{
			System: sys, Flush: flush, RecordBytes: 256, Writers: 64,
			WindowSeconds: 2, Records: int64(rps * 2), RecordsPerSec: rps, MBPerSec: rps * 256 / 1e6,
			Latency:             Latency{Count: int64(rps * 2), P50: p50, P99: 2 * p50, P999: 3 * p50, Max: 4 * p50},
			CPUSecondsPerRecord: cpu(c), AllocsPerRecord: 10,
			ProcessCores: cpu(rps * c), Machine: &MachineLoad{Busy: 0.875, IOWait: 0.0625},
		}
	}
	rep := Report{
		Machine:   Machine{GoVersion: "go1.26.8", OS: "linux", Arch: "amd64", NumCPU: 2, GOMAXPROCS: 2},
		Config:    Config{Warmup: time.Second, Window: 2 * time.Second, Dir: "/data"},
		Floors:    Floors{RTT: Latency{Count: 100, P50: 20 * time.Microsecond, P99: 40 * time.Microsecond}, Fsync: Latency{Count: 10, P50: time.Millisecond, P99: 2 * time.Millisecond}},
		Reference: "kraftlab",
		Results: []Result{
			res("kraftlab", "never", 150000, 400*time.Microsecond, 10e-6),
			res("hashicorp", "never", 100000, 800*time.Microsecond, 20e-6),
			res("kraftlab", "always", 30000, 2*time.Millisecond, 40e-6),
			res("hashicorp", "always", 10000, 4*time.Millisecond, 80e-6),
		},
	}
	rep.Results = append(rep.Results, Result{System: "etcd", Flush: "never", RecordBytes: 256, Writers: 64, Error: "etcd: no stable leader within 30s"})
	rep.compare()
	return rep
}

func TestCompareAgainstReference(t *testing.T) {
	rep := sampleReport()
	for _, r := range rep.Results {
		switch {
		case r.System == "kraftlab" || r.Error != "":
			if r.VsReference != nil {
				t.Errorf("%s %s has ratios, want none", r.System, r.Flush)
			}
		default:
			v := r.VsReference
			if v == nil {
				t.Fatalf("%s %s has no ratios", r.System, r.Flush)
			}
			if v.RecordsPerSec < 1.49 || v.RecordsPerSec > 3.01 || v.P50 != 0.5 || v.P99 != 0.5 || v.CPUPerRecord != 0.5 {
				t.Errorf("%s %s ratios %+v, want kraftlab ÷ hashicorp", r.System, r.Flush, *v)
			}
		}
	}
}

func TestTableSeparatesFlushPoliciesAndShowsRatios(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	never, always, ok := strings.Cut(out, "\nflush always")
	if !ok || !strings.Contains(never, "\nflush never") {
		t.Fatalf("want a flush never section then a flush always section:\n%s", out)
	}
	if strings.Contains(never, "4.00ms") || strings.Contains(always, "800µs") {
		t.Fatalf("a flush policy's rows leaked into the other's section:\n%s", out)
	}
	for _, want := range []string{
		"p50 20.0µs", "p50 1.00ms", // floors
		"kraftlab ÷ this row",
		"1.50x", "0.50x", // hashicorp row, flush never
		"3.00x",  // hashicorp row, flush always
		"20.00x", // kraftlab never: 400µs over a 20µs round trip
		"failed", "no stable leader",
		"1.50", "88%", "6%", // kraftlab never: 150k rec/s at 10 µs is 1.5 cores
		"not per voter",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "kraftlab") && strings.Contains(line, "256 B") && !strings.Contains(line, "ref") {
			t.Errorf("reference row without ref marks: %q", line)
		}
	}
}

func TestJSONReport(t *testing.T) {
	b, err := json.Marshal(sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Reference string `json:"reference"`
		Floors    struct {
			RTT struct {
				P50 int64 `json:"p50Ns"`
			} `json:"rtt"`
		} `json:"floors"`
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Reference != "kraftlab" || got.Floors.RTT.P50 != 20000 || len(got.Results) != 5 {
		t.Fatalf("decoded %+v", got)
	}
	h := got.Results[1]
	if h["system"] != "hashicorp" || h["vsReference"] == nil || h["recordsPerSec"] != 100000.0 {
		t.Fatalf("hashicorp result %v", h)
	}
	if _, ok := got.Results[0]["vsReference"]; ok {
		t.Fatal("the reference compares with itself")
	}
	if got.Results[4]["error"] == nil {
		t.Fatal("the failed case lost its error")
	}
}

func TestFormatting(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                         "-",
		500:                       "500ns",
		6170:                      "6.17µs",
		39200:                     "39.2µs",
		643000:                    "643µs",
		1510000:                   "1.51ms",
		2500 * time.Millisecond:   "2.50s",
		-3:                        "-",
		time.Millisecond * 123:    "123ms",
		time.Microsecond * 999999: "1000ms",
	} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%d) = %q, want %q", d, got, want)
		}
	}
	if fmtSize(4096) != "4 KiB" || fmtSize(256) != "256 B" || fmtSize(1500) != "1500 B" {
		t.Error("fmtSize")
	}
}

// A run of one system has nothing to compare: no ratio columns.
func TestTableOfOneSystemHasNoRatios(t *testing.T) {
	rep := sampleReport()
	var rows []Result
	for _, r := range rep.Results {
		if r.System == "kraftlab" {
			rows = append(rows, r)
		}
	}
	rep.Results = rows
	var buf bytes.Buffer
	if err := WriteTable(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "÷rec/s") || strings.Contains(out, " ref") || !strings.Contains(out, "20.00x") {
		t.Fatalf("one-system table:\n%s", out)
	}
}
