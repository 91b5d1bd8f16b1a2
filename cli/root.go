// Package cli holds kraftlab's cobra commands: a thin shell that starts a
// playground or talks to a running one over its control API.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/engine"
)

// Version is the kraftlab version, set at build time with
// -ldflags "-X github.com/kraftlab/kraftlab/cli.Version=...".
var Version = "0.1.0-dev"

// Exit codes shared by every command (DESIGN.md section 3).
const (
	ExitOK     = 0
	ExitFailed = 1 // a wait or expect did not hold
	ExitUsage  = 2 // bad usage, no running session, or a failed command
)

// Command annotations.
const (
	// annotNoScenario marks commands that make no sense as a scenario line.
	annotNoScenario = "kraftlab/no-scenario"
	// annotScenarioWith names flags (comma-separated) that make a command
	// marked annotNoScenario, or under one, a scenario line after all.
	annotScenarioWith = "kraftlab/scenario-with"
)

// env is what commands need from the outside world, so that the same
// command tree serves the shell, scenario lines and tests.
type env struct {
	stdout, stderr io.Writer
	// stdin is where pause and scenario run --step read Enter; nil reads
	// nothing (as </dev/null would).
	stdin  io.Reader
	getenv func(string) string
	// open starts a playground; engine.Open unless a test replaces it.
	open func(context.Context, cluster.Config) (*cluster.Playground, error)
	// session, when set, is where every command goes, whatever --session
	// and $KRAFTLAB_SESSION say: a scenario line runs against its own
	// playground.
	session *control.Session
	// scenario is set while checking or running a scenario line.
	scenario bool
}

func defaultEnv() *env {
	return &env{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv, open: engine.Open}
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "kraftlab",
		Short: "A playground for KRaft and Kafka replication",
		Long: `kraftlab starts a real, in-process KRaft cluster on this machine — controllers
and brokers talking Apache Kafka's wire protocol over local TCP — and lets you
watch and break its replication live.

Start a playground in one shell with "kraftlab up", then drive it from another:
"kraftlab status", "kraftlab kill leader", "kraftlab wait new-leader".
"kraftlab tui" opens more live screens on it (quitting them leaves it
running), and "kraftlab scenario run --session NAME --step FILE" walks a
room through a scenario on it, line by line.
NODE is a node ID (controllers 1..N, brokers 101..100+M), leader, follower
(the running follower of the leader with the lowest ID), old-leader (the
leader before the last kill, stop, isolate, resign, wipe, disk or mark),
target (the node that action targeted) or controller (the active
controller); in zk mode also zk (the ZooKeeper server: kill, stop,
start, and partition or heal BROKER zk).
Exit codes: 0 ok, 1 a wait or expect did not hold, 2 usage or connection error.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.PersistentFlags().String("session", "", "the playground to use, when several run side by side (default $"+control.EnvSession+" or \"default\")")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: flagError(cmd, err)}
	})
	root.AddGroup(
		&cobra.Group{ID: "run", Title: "Run a playground:"},
		&cobra.Group{ID: "look", Title: "Look at it:"},
		&cobra.Group{ID: "break", Title: "Break and mend it:"},
		&cobra.Group{ID: "check", Title: "Check it:"},
		&cobra.Group{ID: "teach", Title: "Teach with it:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("run", newUpCommand(e), newDownCommand(e), newScenarioCommand(e), newLoadCommand(e), newProduceCommand(e), newConsumeCommand(e))
	add("look", newStatusCommand(e), newNodesCommand(e), newBrokersCommand(e), newFetchersCommand(e), newTopicsCommand(e), newGroupsCommand(e), newMetadataCommand(e), newMetricsCommand(e), newEventsCommand(e))
	add("break", newNodeActionCommands(e)...)
	add("break", newControllersCommand(e), newResignCommand(e), newElectLeadersCommand(e), newReassignCommand(e), newPartitionCommand(e), newHealCommand(e), newLinkCommand(e), newDiskCommand(e))
	add("break", newClockCommand(e), newMessagesCommand(e), newStepCommand(e), newDropCommand(e), newRewindCommand(e), newHistoryCommand(e))
	add("check", newWaitCommand(e, false), newWaitCommand(e, true), newMarkCommand(e))
	add("teach", newTeachCommands(e)...)
	add("teach", newLessonCommand(e))
	root.AddCommand(newBenchCommand(e))
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "completion", "help":
			c.Annotations = map[string]string{annotNoScenario: "it only prints help or shell code"}
		}
		switch c.Name() {
		case "completion", "help", "bench":
			// --session means nothing here: a flag of their own, hidden,
			// shadows root's in their help and their subcommands'.
			c.PersistentFlags().String("session", "", "")
			c.PersistentFlags().MarkHidden("session")
		}
	}
	return root
}

// Execute runs kraftlab with the process's arguments and exits with
// kraftlab's exit codes.
func Execute() {
	initSelf()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], defaultEnv())
	stop()
	os.Exit(code)
}

// run executes one command line, prints its error and returns its exit code.
func run(ctx context.Context, args []string, e *env) int {
	err := execute(ctx, args, e)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(e.stderr, "kraftlab:", err)
	return exitCode(err)
}

// execute runs one command line and returns its error, which carries the
// exit code.
func execute(ctx context.Context, args []string, e *env) error {
	root := newRoot(e)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "unknown command") {
		return unknownCommand(root, args)
	}
	return err
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the process exit code the error stands for.
func (e *exitError) ExitCode() int { return e.code }

func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitUsage
}

func usagef(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

func failedf(format string, args ...any) error {
	return &exitError{code: ExitFailed, err: fmt.Errorf(format, args...)}
}
