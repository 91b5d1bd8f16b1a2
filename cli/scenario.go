package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/scenario"
)

// scenarioProfile is the profile scenarios run with unless the file's up
// line or --profile names another: the fast profile, as DESIGN.md says.
const scenarioProfile = cluster.ProfileFast

func newScenarioCommand(e *env) *cobra.Command {
	noScenario := map[string]string{annotNoScenario: "scenarios do not nest"}
	parent := &cobra.Command{
		Use:         "scenario",
		Short:       "Run scenario files",
		Annotations: noScenario,
		Args:        nodeArgs(0, 0, "a subcommand", "kraftlab scenario run examples/leader-failover.txt"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("scenario needs a subcommand: kraftlab scenario run FILE... or kraftlab scenario check FILE...")
		},
	}
	var profile string
	var sets []string
	run := &cobra.Command{
		Use:   "run FILE...",
		Short: "Run scenario files, each against a fresh playground",
		Long: `Run reads each scenario file (kraftlab subcommands, one per line, without
"kraftlab", # comments, an optional first "up ..." line for the playground's
shape), checks every line of every file before anything runs, then runs each
file against a fresh playground, printing each step with its time. A file
stops at its first failing line, reported as FILE:LINE with the condition and
what it last saw. Exit code: 0 all passed, 1 a wait or expect failed, 2 a
file or a command was wrong.

Scenarios run with the fast profile unless the up line or --profile says
otherwise; --profile wins over the file. While one runs, other shells can
watch it with --session (printed at the start).`,
		Example:     indentExample("kraftlab scenario run examples/*.txt\nkraftlab scenario run examples/leader-failover.txt --profile workshop --session demo"),
		Annotations: noScenario,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("scenario run needs at least one FILE, e.g.: kraftlab scenario run examples/leader-failover.txt")
			}
			if profile != "" {
				if _, err := cluster.ProfileTiming(profile); err != nil {
					return usagef("%v", err)
				}
			}
			return nil
		},
	}
	run.Flags().StringVar(&profile, "profile", "", "timing profile, over the files' up lines (default: the up line's, else fast)")
	run.Flags().StringArrayVar(&sets, "set", nil, "override a timing value by its Kafka config name, after the files' own (repeatable)")
	addJSONFlag(run)
	run.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(cluster.Profiles(), cobra.ShellCompDirectiveNoFileComp))
	run.RegisterFlagCompletionFunc("set", completeSettings)
	run.RunE = func(cmd *cobra.Command, args []string) error {
		return runScenarios(e, cmd, args, profile, sets)
	}
	check := &cobra.Command{
		Use:   "check FILE...",
		Short: "Check scenario files without running them",
		Long: `Check reads each scenario file and checks every line as "scenario run" does
before it runs anything: the commands exist, and their flags, node
references, conditions and durations are valid. It reports every problem as
FILE:LINE and exits 2 if there is any.`,
		Example:     indentExample("kraftlab scenario check examples/*.txt"),
		Annotations: noScenario,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("scenario check needs at least one FILE, e.g.: kraftlab scenario check examples/*.txt")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := loadScenarios(e, cmd, args); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d scenario files are valid\n", len(args))
			return nil
		},
	}
	parent.AddCommand(run, check)
	return parent
}

// loadScenarios parses and checks every file, reporting every problem.
func loadScenarios(e *env, cmd *cobra.Command, files []string) ([]*scenario.Script, error) {
	var scripts []*scenario.Script
	var problems []string
	bad := 0
	for _, f := range files {
		s, err := scenario.Load(f, e.checkLine)
		if err != nil {
			problems = append(problems, err.Error())
			bad++
			continue
		}
		scripts = append(scripts, s)
	}
	if len(problems) > 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), strings.Join(problems, "\n"))
		return nil, usagef("%d of %d scenario files have problems (listed above)", bad, len(files))
	}
	return scripts, nil
}

func runScenarios(e *env, cmd *cobra.Command, files []string, profile string, sets []string) error {
	scripts, err := loadScenarios(e, cmd, files)
	if err != nil {
		return usagef("nothing ran: %v", err)
	}
	session, err := scenarioSession(e, cmd)
	if err != nil {
		return err
	}
	r := &scenario.Runner{
		Start: func(ctx context.Context, s *scenario.Script) (string, func() error, error) {
			cfg, err := scenarioConfig(e, s, profile, sets)
			if err != nil {
				return "", nil, err
			}
			p, err := startPlayground(ctx, e, session, cfg)
			if err != nil {
				return "", nil, err
			}
			return shape(cfg) + ", session " + session.Name, p.stop, nil
		},
		Exec: func(ctx context.Context, args []string, out io.Writer) error {
			line := &env{stdout: out, stderr: out, getenv: e.getenv, open: e.open, session: &session, scenario: true}
			return execute(ctx, args, line)
		},
	}
	if !wantJSON(cmd) {
		r.Out = cmd.OutOrStdout()
	}
	rep := r.Run(cmd.Context(), scripts)
	if wantJSON(cmd) {
		if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
			return err
		}
	}
	if rep.OK {
		return nil
	}
	failed := 0
	for _, f := range rep.Files {
		if !f.OK {
			failed++
		}
	}
	return &exitError{code: rep.ExitCode, err: fmt.Errorf("%d of %d scenario files failed", failed, len(files))}
}

// scenarioSession is --session if given, else a name of this process's own,
// so that runs never collide with each other or with a playground of "up".
func scenarioSession(e *env, cmd *cobra.Command) (control.Session, error) {
	name, _ := cmd.Flags().GetString("session")
	if name == "" {
		name = fmt.Sprintf("scenario-%d", os.Getpid())
	}
	s, err := control.NewSession(control.Home(e.getenv), name)
	if err != nil {
		return s, usagef("%v", err)
	}
	return s, nil
}

// scenarioConfig builds a script's playground configuration: its up line,
// then the run's --profile and --set.
func scenarioConfig(e *env, s *scenario.Script, profile string, sets []string) (cluster.Config, error) {
	cmd, o := upCommand(e)
	if s.Up != nil {
		if err := cmd.ParseFlags(s.Up.Args[1:]); err != nil {
			return cluster.Config{}, err
		}
	}
	switch {
	case profile != "":
		o.profile = profile
	case !cmd.Flags().Changed("profile"):
		o.profile = scenarioProfile
	}
	o.sets = append(o.sets, sets...)
	return o.config()
}

// checkLine checks a scenario line without running it: the command exists
// and may be a scenario line, and its flags and arguments (node references,
// conditions, durations) are valid.
func (e *env) checkLine(args []string) error {
	check := &env{stdout: io.Discard, stderr: io.Discard, getenv: e.getenv, open: e.open, scenario: true}
	root := newRoot(check)
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		return unknownCommand(root, args)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%v (see: %s --help)", err, cmd.CommandPath())
	}
	if cmd.Flags().Changed("session") {
		return errors.New("--session has no place in a scenario line: every line runs against the scenario's own playground")
	}
	if cmd.Name() == "up" {
		return cmd.ValidateArgs(cmd.Flags().Args())
	}
	for c := cmd; c != nil; c = c.Parent() {
		if why, ok := c.Annotations[annotNoScenario]; ok {
			return fmt.Errorf("%s cannot be a scenario line: %s", cmd.CommandPath()[len("kraftlab "):], why)
		}
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	return cmd.ValidateRequiredFlags()
}

// unknownCommand is the one-line error for a command kraftlab lacks.
func unknownCommand(root *cobra.Command, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("want a command, e.g.: status (see: kraftlab --help)")
	}
	hint := ""
	if s := root.SuggestionsFor(args[0]); len(s) > 0 {
		hint = fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
	}
	return usagef("unknown command %q%s (see: kraftlab --help)", args[0], hint)
}
