// Package cli holds kraftlab's cobra commands: a thin shell that starts a
// playground or talks to a running one over its control API.
package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Version is the kraftlab version, set at build time with
// -ldflags "-X github.com/kraftlab/kraftlab/cli.Version=...".
var Version = "0.1.0-dev"

// Exit codes shared by every command (DESIGN.md section 3).
const (
	ExitOK     = 0
	ExitFailed = 1 // a wait or expect did not hold
	ExitUsage  = 2 // bad usage or no running session
)

// NewRootCommand builds the kraftlab command tree.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "kraftlab",
		Short: "A playground for KRaft and Kafka replication",
		Long: `kraftlab starts a real, in-process KRaft cluster on this machine — controllers
and brokers talking Apache Kafka's wire protocol over local TCP — and lets you
watch and break its replication live.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newUpCommand())
	return root
}

// Execute runs the root command and exits with kraftlab's exit codes.
func Execute() {
	if err := NewRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "kraftlab:", err)
		os.Exit(exitCode(err))
	}
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if e, ok := err.(*exitError); ok {
		return e.code
	}
	return ExitUsage
}
