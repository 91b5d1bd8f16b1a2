// Command bench compares kraftlab's pull-based KRaft quorum with
// hashicorp/raft and etcd raft: the same workload on the same machine in
// the same run, so the machine's noise cancels out in the ratios.
//
// It is its own Go module so that the kraftlab binary does not depend on
// the peers; the workload, the floors and the report are package benchkit
// of the kraftlab module, which `kraftlab bench quorum` runs for kraftlab
// alone. Run it from this directory:
//
//	go run . quorum [--json] [--duration D] [--systems kraftlab,hashicorp,etcd] ...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kraftlab/kraftlab/benchkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code: 0 when every
// case ran, 1 when a case or a floor failed, 2 for a bad command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "quorum" {
		fmt.Fprintln(stderr, "usage: go run . quorum [flags]   (run `go run . quorum -h` for the flags)")
		return 2
	}
	cfg, asJSON, err := parseQuorum(args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench quorum: %v\n", err)
		return 2
	}
	if err := benchkit.Main(ctx, cfg, asJSON, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bench quorum: %v\n", err)
		return 1
	}
	return 0
}

// parseQuorum reads the quorum command's flags.
func parseQuorum(args []string, stderr io.Writer) (benchkit.Config, bool, error) {
	fs := flag.NewFlagSet("quorum", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f benchkit.Flags
	var defaults []string
	for _, s := range registry() {
		if !s.Optional {
			defaults = append(defaults, s.Name)
		}
	}
	f.Register(fs, strings.Join(defaults, ","))
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run . quorum [flags]\n\nRuns 3-voter replicated logs over loopback TCP side by side and prints throughput,\ncommit latency, CPU and allocations per committed record, with ratios to the first system.\n\nsystems:\n")
		for _, s := range registry() {
			opt := ""
			if s.Optional {
				opt = " (only when --systems names it)"
			}
			fmt.Fprintf(stderr, "  %-16s %s%s\n", s.Name, s.About, opt)
		}
		fmt.Fprintf(stderr, "\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return benchkit.Config{}, false, err
	}
	if fs.NArg() > 0 {
		return benchkit.Config{}, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := f.Config(registry())
	return cfg, f.JSON, err
}
