// Package transcript is what the protocol transcript tests share: each file
// of a testdata folder is a story told in datadriven directives
// (github.com/cockroachdb/datadriven), each directive drives the state
// machine under test, and its expected output is what the machine did,
// printed so that the file reads as a protocol trace. A suite keeps its
// own commands; this package walks the files with a fresh script for
// each, reads a directive's arguments — bare words, key=value,
// key=(1,2,3) and key=(a=1 b=2) — failing on any the command did not use,
// and prints lists, error codes and times in one stable form. Rewrite a
// suite's expected outputs with datadriven's flag:
//
//	go test ./path/to/pkg/ -run TestTranscripts -rewrite
package transcript

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Script runs one directive of a file and returns its output.
type Script func(c *Cmd) string

// Walk runs every file under dir (a subtest each) with a fresh script from
// start, which may register cleanups on t for what the file opened.
func Walk(t *testing.T, dir string, start func(t *testing.T) Script) {
	t.Helper()
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		run := start(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			c := &Cmd{T: t, D: d, used: make([]bool, len(d.CmdArgs))}
			out := run(c)
			c.done()
			switch {
			case out == "":
				return "(none)\n"
			case out[len(out)-1] != '\n':
				return out + "\n"
			}
			return out
		})
	})
}
