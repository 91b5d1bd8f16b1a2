package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kraftlab/kraftlab/internal/closest"
)

// durationWant is what every duration flag and argument asks for.
const durationWant = "want a duration like 5s or 500ms"

var (
	invalidArgument = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?--([\w.-]+)" flag: `)
	negativeNumber  = regexp.MustCompile(`^unknown shorthand flag: '\d' in (-\d[\d.]*)$`)
	unknownFlag     = regexp.MustCompile(`^unknown flag: --([^=\s]+)`)
	unknownShort    = regexp.MustCompile(`^unknown shorthand flag: '.' in -([^=\s]+)`)
)

// maxFlagTypos is how many edits a mistyped flag name may be from the
// flag it means: --jsn is --json, --sesion is --session.
const maxFlagTypos = 2

// nearestFlag is the name of cmd's visible flag closest to name, within
// maxFlagTypos edits (one for a name of three letters or fewer), or a
// flag it is the start of; "" when none is.
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestDist := "", maxFlagTypos+1
	if len(name) <= 3 {
		bestDist = 2
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := closest.Distance(name, f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, name) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// flagError turns a flag parsing error into one line that says what was
// wanted, instead of Go's strconv or time errors, and points at the
// command's help.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if m := negativeNumber.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s is not a flag, and %s takes no negative numbers (see: %s --help)", m[1], cmd.CommandPath()[len("kraftlab "):], cmd.CommandPath())
	}
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		if m[1] == flagBootstrap || m[1] == flagBootstrapController || m[1] == flagCommandConfig || m[1] == "bootstrap" {
			return fmt.Errorf("%s works on a playground; a real Kafka cluster is only read, by status, nodes, brokers, topics list|describe, wait, expect, events --follow and tui with --%s",
				cmd.CommandPath(), flagBootstrap)
		}
		if near := nearestFlag(cmd, m[1]); near != "" {
			msg += fmt.Sprintf("; did you mean --%s?", near)
		}
	}
	if m := unknownShort.FindStringSubmatch(msg); m != nil {
		// -json for --json: one dash short.
		if near := nearestFlag(cmd, m[1]); near != "" && len(m[1]) > 1 {
			msg += fmt.Sprintf("; did you mean --%s?", near)
		}
	}
	if m := invalidArgument.FindStringSubmatch(msg); m != nil {
		if f := cmd.Flags().Lookup(m[2]); f != nil {
			tail := msg[len(m[0]):]
			switch t := f.Value.Type(); {
			case t == "duration" && !strings.HasPrefix(tail, "must"):
				msg = m[0] + durationHint(m[1])
			case strings.HasPrefix(tail, "strconv."):
				want := "want a whole number"
				if strings.HasPrefix(t, "uint") {
					want = "want a whole number, 0 or more"
				}
				msg = m[0] + want
			}
		}
	}
	return fmt.Errorf("%s (see: %s --help)", msg, cmd.CommandPath())
}

// durationHint says what a bad duration lacks: a plain number needs a unit.
func durationHint(s string) string {
	if numeric.MatchString(s) {
		return fmt.Sprintf("%s (a number needs a unit: %ss)", durationWant, s)
	}
	return durationWant
}

var numeric = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
