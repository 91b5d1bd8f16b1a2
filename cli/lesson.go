package cli

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/scenario"
)

// lessonFS holds the shipped lessons, cli/lessons/*.txt: scenario files
// with ask lines. Each file's first comment line is its title; its name is
// the file name without the order prefix and .txt.
//
//go:embed lessons/*.txt
var lessonFS embed.FS

// lesson is one shipped lesson: an embedded scenario file.
type lesson struct {
	name, file, title string
	text              []byte
}

// shippedLessons lists the embedded lessons in their order (the files'
// number prefixes).
func shippedLessons() ([]lesson, error) {
	files, err := fs.Glob(lessonFS, "lessons/*.txt")
	if err != nil {
		return nil, err
	}
	var ls []lesson
	for _, f := range files {
		b, err := lessonFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		f = path.Base(f)
		name := strings.TrimSuffix(f, ".txt")
		if i := strings.IndexByte(name, '-'); i > 0 && strings.Trim(name[:i], "0123456789") == "" {
			name = name[i+1:]
		}
		title, _, _ := strings.Cut(string(b), "\n")
		ls = append(ls, lesson{name: name, file: f, title: strings.TrimSpace(strings.TrimPrefix(title, "#")), text: b})
	}
	return ls, nil
}

func newLessonCommand(e *env) *cobra.Command {
	var profile string
	var noPause bool
	cmd := &cobra.Command{
		Use:   "lesson [NAME]",
		Short: "List the lessons, or run one: explanations, predictions to make, a real playground",
		Long: `Without NAME, lesson lists the lessons kraftlab ships. With NAME (or its
number), it runs that lesson on a fresh playground of its own.

On a terminal, lesson opens the live screen (as "kraftlab up" does) with a
lesson panel at its bottom that walks the lesson: it shows the explanation
above the next line, and Enter runs the line. At a question (an ask line)
it lists the choices and you press a choice's number to predict; after the
lines it asked about, the panel says whether your prediction held and
points at the lines whose results show it, with the lesson's own words.
The output pane shows the whole of what the last line printed (status,
topics describe, fetchers...), and the panel a line points at stays on
screen whole. Between lines every other key of the screen works (kill,
isolate, link, load...), : runs any other command into the output pane,
e tells the last election; { and } scroll the lesson's text, ( and ) the
output, ? lists the keys. When the
lesson ends, or stops at a line that failed, the screen stays until you
quit it (q, then y); quitting, even mid-lesson, stops the lesson and its
playground, and then prints what ran.

Without a terminal (a pipe, a script), it runs as "kraftlab scenario run
--step" would, in the shell: it shows each explanation, waits for Enter
before each line, and at each question reads your prediction, a number and
Enter; after the line it asked about it says whether your prediction held,
and why.

Lessons run with the workshop profile (their up lines say so): elections
and timeouts take seconds, as slow as a person can watch them, and
--profile fast runs them in a few seconds instead. --no-pause runs in the
shell without waiting: it shows the explanations and answers every question
with the right answer.

The lessons are scenario files. To write your own, print one (kraftlab
lesson NAME --print), change it, and run it with
"kraftlab scenario run --step FILE", beside "kraftlab tui --session NAME".`,
		Example: indentExample(`kraftlab lesson
kraftlab lesson replication
kraftlab lesson 2 --profile fast
kraftlab lesson elections --print > my-lesson.txt`),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("lesson takes at most one lesson NAME, got %d (%s); e.g.: kraftlab lesson replication", len(args), strings.Join(args, " "))
			}
			return nil
		},
		Annotations: map[string]string{annotNoScenario: "lessons are scenarios, which do not nest"},
	}
	cmd.Flags().StringVar(&profile, "profile", "", "timing profile, over the lesson's up line (workshop)")
	cmd.Flags().BoolVar(&noPause, "no-pause", false, "do not wait: show the explanations and take the right answers")
	printIt := cmd.Flags().Bool("print", false, "print the lesson's scenario file instead of running it")
	cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(cluster.ProfileNames(), cobra.ShellCompDirectiveNoFileComp))
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		ls, _ := shippedLessons()
		var names []string
		for _, l := range ls {
			names = append(names, l.name+"\t"+l.title)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ls, err := shippedLessons()
		if err != nil {
			return err
		}
		if len(args) == 0 {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for i, l := range ls {
				fmt.Fprintf(w, "%d\t%s\t%s\n", i+1, l.name, l.title)
			}
			w.Flush()
			fmt.Fprintln(cmd.OutOrStdout(), "\nrun one with: kraftlab lesson NAME")
			return nil
		}
		var l *lesson
		for i := range ls {
			if args[0] == ls[i].name || args[0] == fmt.Sprint(i+1) || args[0] == ls[i].file {
				l = &ls[i]
			}
		}
		if l == nil {
			var names []string
			for _, l := range ls {
				names = append(names, l.name)
			}
			return usagef("no lesson %q; the lessons: %s (see: kraftlab lesson)", args[0], strings.Join(names, ", "))
		}
		if *printIt {
			_, err := cmd.OutOrStdout().Write(l.text)
			return err
		}
		if cmd.Flags().Changed("session") {
			return usagef("a lesson runs on a fresh playground of its own (watch it with the session it prints); to run it on a running one: kraftlab lesson %s --print > %s && kraftlab scenario run --step --session NAME %s", l.name, l.file, l.file)
		}
		if profile != "" {
			if _, err := cluster.ProfileSettings(cluster.ProfileName(profile)); err != nil {
				return usagef("%v", err)
			}
		}
		s, err := loadLesson(e, *l)
		if err != nil {
			return err
		}
		if !noPause && onTerminal(e) {
			return runLessonScreen(e, cmd, *l, s, profile)
		}
		return runScenarios(e, cmd, []string{s.File}, scenarioOptions{profile: profile, step: !noPause, noPause: noPause, explain: noPause, scripts: []*scenario.Script{s}})
	}
	return cmd
}

// loadLesson parses and checks an embedded lesson as scenario run checks
// a file; its errors are the binary's, and a test keeps them out.
func loadLesson(e *env, l lesson) (*scenario.Script, error) {
	file := path.Join("cli/lessons", l.file)
	s, err := scenario.Parse(file, bytes.NewReader(l.text))
	if err == nil {
		err = s.Validate(e.checkerFor(s, nil))
	}
	if err != nil {
		return nil, fmt.Errorf("lesson %s: %w", l.name, err)
	}
	return s, nil
}
