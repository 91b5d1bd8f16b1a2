package benchkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrCaseFailed is returned by Main when the report was printed but some
// case failed; the failures are in the report and on stderr.
var ErrCaseFailed = errors.New("a case failed")

// Main runs cfg as the `bench quorum` command does: in a fresh temporary
// folder unless cfg.Dir names one, under a CPU profile if asked, printing
// progress to stderr and the report (a table, or JSON) to stdout.
func Main(ctx context.Context, cfg Config, asJSON bool, stdout, stderr io.Writer) error {
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "kraftlab-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	prof, err := cfg.Profiles.start()
	if err != nil {
		return err
	}
	rep, runErr := Run(ctx, cfg, stderr)
	if perr := prof.stop(); perr != nil {
		fmt.Fprintf(stderr, "profiles: %v\n", perr)
	}
	if runErr != nil && len(rep.Results) == 0 {
		return runErr
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = WriteTable(stdout, rep)
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if runErr != nil {
		return runErr
	}
	failed := false
	for _, r := range rep.Results {
		if r.Error != "" {
			fmt.Fprintf(stderr, "%s flush %s %s %s failed: %s\n", r.System, r.Flush, fmtSize(r.RecordBytes), r.key().Load, r.Error)
			failed = true
		}
	}
	if failed {
		return ErrCaseFailed
	}
	return nil
}
