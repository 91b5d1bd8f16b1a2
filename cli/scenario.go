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
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/scenario"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// scenarioProfile is the profile scenarios run with unless the file's up
// line or --profile names another: the fast profile, as DESIGN.md says.
const scenarioProfile = string(cluster.ProfileFast)

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
	var step, noPause bool
	run := &cobra.Command{
		Use:   "run FILE...",
		Short: "Run scenario files, each against a fresh playground or one that runs",
		Long: `Run reads each scenario file (kraftlab subcommands, one per line, without
"kraftlab", # comments, an optional first "up ..." line for the playground's
shape), checks every line of every file before anything runs, then runs each
file against a fresh playground, printing each step with its time. A file
stops at its first failing line, reported as FILE:LINE with the condition and
what it last saw. Exit code: 0 all passed, 1 a wait or expect failed, 2 a
file or a command was wrong.

Scenarios run with the fast profile unless the up line or --profile says
otherwise; --profile wins over the file. While one runs, other shells can
watch it with the session printed at the start.

To show a scenario to a room, start a playground first (kraftlab up, or
kraftlab up --headless --session demo with kraftlab tui --session demo on
the projector) and run the file against it with --session NAME: its lines
then act on that playground, which keeps running afterwards, in its own
profile (--profile and --set do not apply; only --session NAME given as a
flag attaches, not $` + control.EnvSession + `). The file's up line, if any, must fit the
playground: the same controllers, --set values and --profile (where the
line names them), and the same brokers, or any when the line asks for none
(a quorum lesson: the brokers only watch). A file that does not fit runs
nothing, and the error prints the commands that start a playground it
fits. Several files run one after the other on it.

--step waits for Enter before each line, showing the comment block above
it (and first the file's header comment). Scenario lines for teaching:
  say TEXT     show TEXT on every live screen of the playground, and print it
  sleep D      wait for D (a Go duration, at most 10m)
  pause [TEXT] print TEXT and wait for Enter
  ask QUESTION | CHOICE | CHOICE [| ...] => N
               ask for a prediction of what the next line does (N is the
               right choice); after that line (and the wait or expect
               right after it) say whether it held; see kraftlab lesson
A line ending in a lone & runs in the background, as in a shell: the run
goes on and prints its result when it ends (a line that fails there fails
the file; one still running 30s after the last line fails it too). With
the cluster clock paused, a topic creation waits for its forwarded request
to be stepped: "topics create orders &" and then "step" lines.
Enter is read from standard input. When it ends or is not there
(</dev/null, CI), a pause or a --step prompt fails the file at its line
(exit 2) instead of hanging; --no-pause skips pauses, and under --step a
pause does not wait a second time. An ask line reads a number and Enter;
without input, or with --no-pause, it prints the right answer and goes on.`,
		Example: indentExample(`kraftlab scenario run examples/*.txt
kraftlab scenario run examples/leader-failover.txt --profile workshop
kraftlab scenario run --session demo --step examples/snapshot-catch-up.txt
kraftlab scenario run --session demo --no-pause examples/leader-failover.txt`),
		Annotations: noScenario,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("scenario run needs at least one FILE, e.g.: kraftlab scenario run examples/leader-failover.txt")
			}
			if profile != "" {
				if _, err := cluster.ProfileSettings(cluster.ProfileName(profile)); err != nil {
					return usagef("%v", err)
				}
			}
			if cmd.Flags().Changed("session") && (profile != "" || len(sets) > 0) {
				return usagef("--profile and --set shape a fresh playground; the running playground of --session keeps its own timing (leave --session out for a fresh one)")
			}
			return nil
		},
	}
	run.Flags().StringVar(&profile, "profile", "", "timing profile, over the files' up lines (default: the up line's, else fast)")
	run.Flags().StringArrayVar(&sets, "set", nil, "override a timing value by its Kafka config name, after the files' own (repeatable)")
	run.Flags().BoolVar(&step, "step", false, "wait for Enter before each line, showing the comment above it")
	run.Flags().BoolVar(&noPause, "no-pause", false, "skip pause lines instead of waiting for Enter")
	addJSONFlag(run)
	run.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(cluster.ProfileNames(), cobra.ShellCompDirectiveNoFileComp))
	run.RegisterFlagCompletionFunc("set", completeSettings)
	run.RunE = func(cmd *cobra.Command, args []string) error {
		return runScenarios(e, cmd, args, scenarioOptions{profile: profile, sets: sets, step: step, noPause: noPause})
	}
	check := &cobra.Command{
		Use:   "check FILE...",
		Short: "Check scenario files without running them",
		Long: `Check reads each scenario file and checks every line as "scenario run" does
before it runs anything: the commands exist, and their flags, node
references, conditions and durations are valid, and every node ID belongs
to the playground the file's up line makes (without one: up's default of 3
controllers and 3 brokers; with --session NAME: that running playground,
which the up line must fit, as scenario run --help says). It reports every
problem as FILE:LINE and exits 2 if there is any.`,
		Example:     indentExample("kraftlab scenario check examples/*.txt"),
		Annotations: noScenario,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("scenario check needs at least one FILE, e.g.: kraftlab scenario check examples/*.txt")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			att, err := attachTo(e, cmd)
			if err != nil {
				return err
			}
			if _, err := loadScenarios(e, cmd, args, att); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s valid\n", countIs(len(args), "scenario file"))
			return nil
		},
	}
	parent.AddCommand(run, check)
	return parent
}

// loadScenarios parses and checks every file, reporting every problem;
// att is the running playground the files will run on, or nil.
func loadScenarios(e *env, cmd *cobra.Command, files []string, att *attached) ([]*scenario.Script, error) {
	var scripts []*scenario.Script
	var problems []string
	bad := 0
	for _, f := range files {
		s, err := scenario.LoadFor(f, func(s *scenario.Script) func([]string) error { return e.checkerFor(s, att) })
		if err != nil {
			problems = append(problems, err.Error())
			bad++
			continue
		}
		scripts = append(scripts, s)
	}
	if len(problems) > 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), strings.Join(problems, "\n"))
		return nil, usagef("%d of %s (listed above)", bad, countHas(len(files), "scenario file", "problems"))
	}
	return scripts, nil
}

// scenarioOptions are scenario run's flags.
type scenarioOptions struct {
	profile       string
	sets          []string
	step, noPause bool
	// explain shows the header and comment blocks as --step does, without
	// waiting (a lesson with --no-pause).
	explain bool
	// scripts, when set, are the files to run (an embedded lesson)
	// instead of reading files.
	scripts []*scenario.Script
}

func runScenarios(e *env, cmd *cobra.Command, files []string, o scenarioOptions) error {
	att, err := attachTo(e, cmd)
	if err != nil {
		return err
	}
	scripts := o.scripts
	if scripts == nil {
		if scripts, err = loadScenarios(e, cmd, files, att); err != nil {
			return usagef("nothing ran: %v", err)
		}
	}
	var session control.Session
	if att != nil {
		session = att.session
	} else if session, err = scenarioSession(e); err != nil {
		return err
	}
	prompt := cmd.OutOrStdout()
	if wantJSON(cmd) {
		prompt = cmd.ErrOrStderr()
	}
	keys := newEnterReader(e, prompt)
	r := &scenario.Runner{
		Start: func(ctx context.Context, s *scenario.Script) (string, func() error, error) {
			if att != nil {
				desc := att.String() + ", running already: it keeps running after the file"
				if req, ok := readUp(e, s.Up); ok && s.Up != nil && req.shape.brokers == 0 && att.shape.brokers > 0 {
					desc += "; the file asks for no brokers, so its brokers only watch"
				}
				return desc, func() error { return nil }, nil
			}
			cfg, err := scenarioConfig(e, s, o.profile, o.sets)
			if err != nil {
				return "", nil, fmt.Errorf("could not start the playground: %w", err)
			}
			p, err := startPlayground(ctx, e, session, cfg)
			if err != nil {
				return "", nil, fmt.Errorf("could not start the playground: %w", err)
			}
			return shape(cfg) + ", session " + session.Name, p.stop, nil
		},
		Exec: func(ctx context.Context, args []string, out io.Writer) error {
			line := &env{stdout: out, stderr: out, getenv: e.getenv, open: e.open, session: &session, scenario: true}
			return execute(ctx, args, line)
		},
		Step:     o.step,
		NoPause:  o.noPause,
		Enter:    keys.wait,
		ReadLine: keys.readLine,
		Prompt:   prompt,
		Explain:  o.explain,
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
	return &exitError{code: rep.ExitCode, err: fmt.Errorf("%d of %s failed", failed, plural(int64(len(files)), "scenario file"))}
}

// attached is the running playground that scenario run --session NAME
// (and scenario check --session NAME) uses.
type attached struct {
	session control.Session
	shape   nodeShape
	profile string
	// settings are the playground's, by Kafka config name; nil from a
	// playground too old to say.
	settings map[string]string
}

func (a *attached) String() string {
	return fmt.Sprintf("%d controllers, %d brokers, profile %s, session %s", a.shape.controllers, a.shape.brokers, a.profile, a.session.Name)
}

// attachTo returns the playground --session names, or nil without the
// flag. It must be running.
func attachTo(e *env, cmd *cobra.Command) (*attached, error) {
	if !cmd.Flags().Changed("session") {
		return nil, nil
	}
	name, _ := cmd.Flags().GetString("session")
	s, err := control.NewSession(control.Home(e.getenv), name)
	if err != nil {
		return nil, usagef("%v", err)
	}
	c := control.NewClient(s)
	defer c.Close()
	v, err := status(cmd.Context(), c)
	if err != nil {
		return nil, err
	}
	a := &attached{session: s, profile: v.Profile, settings: v.Settings, shape: nodeShape{where: fmt.Sprintf("playground %q", name)}}
	for _, n := range v.Nodes {
		if n.Kind == view.KindController {
			a.shape.controllers++
		} else {
			a.shape.brokers++
		}
	}
	return a, nil
}

// nodeShape is how many controllers and brokers a playground has, and
// where that comes from, for checking node IDs.
type nodeShape struct {
	controllers, brokers int
	where                string
}

func (s nodeShape) has(id int32) bool {
	return (id >= 1 && int(id) <= s.controllers) || (id >= cluster.FirstBrokerID && int(id) < cluster.FirstBrokerID+s.brokers)
}

func (s nodeShape) String() string {
	c := fmt.Sprintf("controllers 1..%d", s.controllers)
	if s.controllers == 1 {
		c = "controller 1"
	}
	switch s.brokers {
	case 0:
		return c + " and no brokers"
	case 1:
		return fmt.Sprintf("%s and broker %d", c, cluster.FirstBrokerID)
	}
	return fmt.Sprintf("%s and brokers %d..%d", c, cluster.FirstBrokerID, cluster.FirstBrokerID+s.brokers-1)
}

// nodeArgCommands are the commands whose arguments are all NODEs; wait
// and expect name nodes inside their condition.
var nodeArgCommands = map[string]bool{
	"kill": true, "start": true, "stop": true, "isolate": true, "snapshot": true, "wipe": true,
	"partition": true, "heal": true, "link": true, "metrics": true,
}

// checkNodeIDs reports a node ID the playground does not have. The line
// has passed checkLine.
func checkNodeIDs(args []string, shape nodeShape) error {
	root := newRoot(&env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd.ParseFlags(rest) != nil {
		return nil
	}
	words := cmd.Flags().Args()
	var refs []condition.NodeRef
	switch {
	case nodeArgCommands[cmd.Name()]:
		for _, w := range words {
			if r, err := condition.ParseNodeRef(w); err == nil {
				refs = append(refs, r)
			}
		}
	case cmd.Name() == "wait" || cmd.Name() == "expect":
		if c, err := condition.Parse(strings.Join(words, " ")); err == nil {
			refs = c.Nodes()
		}
	}
	for _, r := range refs {
		if id, ok := r.ID(); ok && !shape.has(id) {
			return fmt.Errorf("unknown node %d: %s makes %s", id, shape.where, shape)
		}
	}
	return nil
}

// scenarioSession is the session of a fresh playground: a name of this
// process's own, so that runs never collide with each other or with a
// playground of "up".
func scenarioSession(e *env) (control.Session, error) {
	name := fmt.Sprintf("scenario-%d", os.Getpid())
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
		o.controllersSet, o.seedSet = cmd.Flags().Changed("controllers"), cmd.Flags().Changed("seed")
	}
	switch {
	case profile != "":
		o.profile = profile
	case !cmd.Flags().Changed("profile"):
		o.profile = scenarioProfile
	}
	// The run's --set goes over the up line's values, its --quorum too.
	for _, kv := range sets {
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == view.ReplicationKey {
			o.quorum = ""
		}
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
		return flagError(cmd, err)
	}
	if cmd.Flags().Changed("session") {
		return errors.New("--session has no place in a scenario line: every line runs against the scenario's own playground")
	}
	if cmd.Name() == "up" {
		if !cmd.Flags().Changed("profile") {
			// A scenario's playground runs the fast profile unless its up
			// line names one: check the line's --set against that, not
			// against up's own default.
			if err := cmd.Flags().Set("profile", scenarioProfile); err != nil {
				return err
			}
		}
		return cmd.ValidateArgs(cmd.Flags().Args())
	}
	if !allowedWith(cmd) {
		for c := cmd; c != nil; c = c.Parent() {
			if why, ok := c.Annotations[annotNoScenario]; ok {
				return fmt.Errorf("%s cannot be a scenario line: %s", cmd.CommandPath()[len("kraftlab "):], why)
			}
		}
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	return cmd.ValidateRequiredFlags()
}

// allowedWith reports whether cmd's line sets a flag that makes it a
// scenario line (annotScenarioWith).
func allowedWith(cmd *cobra.Command) bool {
	for _, name := range strings.Split(cmd.Annotations[annotScenarioWith], ",") {
		if name != "" && cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
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

// countIs spells "1 scenario file is", "2 scenario files are".
func countIs(n int, thing string) string {
	if n == 1 {
		return plural(1, thing) + " is"
	}
	return plural(int64(n), thing) + " are"
}

// countHas spells "1 scenario file has problems", "2 scenario files have problems".
func countHas(n int, thing, what string) string {
	if n == 1 {
		return plural(1, thing) + " has " + what
	}
	return plural(int64(n), thing) + " have " + what
}
