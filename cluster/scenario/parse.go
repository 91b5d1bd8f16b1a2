// Package scenario reads and runs scenario files: kraftlab subcommands, one
// per line, without the "kraftlab" prefix, with # comments and an optional
// first "up ..." line that sets the playground's shape. The lines mean
// what they mean in a shell; this package only splits them, numbers them
// and runs them in order through a function the CLI provides, so that a
// line does exactly what the same command does in a shell. The lines it
// runs itself are pause, which waits for Enter unless the run skips pauses
// or steps through the file (Runner.Step shows each line's comment block
// and waits for Enter before it), and ask, a multiple-choice prediction of
// what the next line will do (see AskCommand).
package scenario

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Step is one command line of a scenario.
type Step struct {
	File string
	Line int
	// Text is the line without its comment, trimmed.
	Text string
	// Args are its words, as a shell would split them.
	Args []string
	// Comment is the block of comment lines right above the line (no
	// blank line between), without their #, for --step to show.
	Comment []string
	// Note is the line's own trailing comment, without its #.
	Note string
	// Background: the line ended in a lone "&" (not in Args): the run
	// starts it and goes on, and reports it when it ends.
	Background bool
}

// Pos is FILE:LINE.
func (s Step) Pos() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Script is one parsed scenario file.
type Script struct {
	File string
	// Up is the optional first "up ..." line; nil when the file has none.
	Up *Step
	// Steps are the other command lines, in order.
	Steps []Step
	// Header is the comment at the top of the file, before its first
	// command and not attached to it, without the #s.
	Header []string
}

// Error is a syntax error at a line of a file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Errors is every syntax error of one or more files, in order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// maxLine bounds a line; scenario lines are short.
const maxLine = 64 << 10

// Load reads a scenario file and checks every line with check (see
// Validate), returning every problem of the file, in line order, as Errors.
func Load(path string, check func(args []string) error) (*Script, error) {
	return LoadFor(path, func(*Script) func([]string) error { return check })
}

// LoadFor is Load with a check made for the parsed script, so that it can
// look at the script's up line (the shape its node IDs must fit).
func LoadFor(path string, checkFor func(s *Script) func(args []string) error) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	defer f.Close()
	s, perr := Parse(path, f)
	var errs Errors
	errors.As(perr, &errs)
	var verrs Errors
	errors.As(s.Validate(checkFor(s)), &verrs)
	errs = append(errs, verrs...)
	if len(errs) == 0 {
		return s, nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	return nil, errs
}

// Parse splits a scenario into steps. It reports every line it cannot
// split, and an "up" line that is not the first command, as Errors; the
// Script it returns then holds the lines it could split.
func Parse(file string, r io.Reader) (*Script, error) {
	s := &Script{File: file}
	var errs Errors
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLine)
	n := 0
	// comment is the block of comment lines just read; header the file's
	// top comment while no command came yet.
	var comment, header []string
	commands := 0
	for sc.Scan() {
		n++
		args, note, err := splitLine(sc.Text())
		if err != nil {
			comment = nil
			errs = append(errs, &Error{File: file, Line: n, Msg: err.Error()})
			continue
		}
		if len(args) == 0 {
			if strings.TrimSpace(sc.Text()) == "" {
				if commands == 0 && len(comment) > 0 {
					header = append(append(header, comment...), "")
				}
				comment = nil
				continue
			}
			comment = append(comment, note)
			continue
		}
		commands++
		if commands == 1 {
			s.Header = trimBlank(header)
		}
		background := args[len(args)-1] == backgroundWord
		if background {
			args = args[:len(args)-1]
			if err := checkBackground(args); err != nil {
				comment = nil
				errs = append(errs, &Error{File: file, Line: n, Msg: err.Error()})
				continue
			}
		}
		st := Step{File: file, Line: n, Text: strings.Join(quoteAll(args), " "), Args: args, Comment: comment, Note: note, Background: background}
		if background {
			st.Text += " " + backgroundWord
		}
		comment = nil
		if args[0] == "up" {
			if s.Up != nil || len(s.Steps) > 0 {
				errs = append(errs, &Error{File: file, Line: n, Msg: "up may only be the first command: it sets the playground's shape before anything runs"})
				continue
			}
			s.Up = &st
			continue
		}
		if args[0] == AskCommand {
			if _, err := ParseAsk(args); err != nil {
				errs = append(errs, &Error{File: file, Line: n, Msg: err.Error()})
				continue
			}
		}
		s.Steps = append(s.Steps, st)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &Error{File: file, Line: n + 1, Msg: fmt.Sprintf("read: %v", err)})
	}
	if len(errs) > 0 {
		return s, errs
	}
	return s, nil
}

// Validate checks every line with check, which gets a line's words (the up
// line's included) and says what is wrong with them, and returns every
// problem as Errors.
func (s *Script) Validate(check func(args []string) error) error {
	var errs Errors
	lines := s.Steps
	if s.Up != nil {
		lines = append([]Step{*s.Up}, lines...)
	}
	for _, st := range lines {
		if st.Args[0] == AskCommand {
			continue // Parse has checked it: the Runner runs it itself
		}
		if err := check(st.Args); err != nil {
			errs = append(errs, &Error{File: s.File, Line: st.Line, Msg: err.Error()})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Split splits a line into words the way a shell does for the simple
// cases: blanks separate words, single and double quotes group them, a
// backslash outside single quotes escapes the next character, and a word
// starting with # starts a comment.
func Split(line string) ([]string, error) {
	args, _, err := splitLine(line)
	return args, err
}

// trimBlank drops the empty lines at both ends of a comment.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// splitLine is Split that also returns the line's comment: what follows
// the #, with one space after it and trailing blanks removed.
func splitLine(line string) (args []string, comment string, err error) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '#' && !inWord:
			c := strings.TrimRight(line[i+1:], " \t\r")
			return args, strings.TrimPrefix(c, " "), nil
		case ch == '\'' || ch == '"':
			end := strings.IndexByte(line[i+1:], ch)
			if ch == '"' {
				end = closingDoubleQuote(line[i+1:])
			}
			if end < 0 {
				return nil, "", fmt.Errorf("unterminated %c quote", ch)
			}
			body := line[i+1 : i+1+end]
			if ch == '"' {
				body = unescapeDouble(body)
			}
			cur.WriteString(body)
			inWord = true
			i += end + 1
		case ch == '\\':
			if i+1 == len(line) {
				return nil, "", errors.New("a backslash ends the line (scenario lines do not continue)")
			}
			i++
			cur.WriteByte(line[i])
			inWord = true
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, "", nil
}

func closingDoubleQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// quoteAll spells words back so that Split would return them again.
func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t'\"\\#") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}
