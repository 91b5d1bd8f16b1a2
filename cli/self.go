package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// self is how the user runs kraftlab, for the commands that up's banner
// and the hints print: "kraftlab" when it is on $PATH, "go run ." under
// go run, else the path it was started by (./kraftlab). Execute sets it.
var self = "kraftlab"

// goRun is set when kraftlab runs under go run: its commands then only
// work from the source folder, which the banner names.
var goRun bool

// selfCommand works out self from os.Args[0]: go run builds into a
// temporary go-build folder, which the next go run no longer has.
func selfCommand(arg0 string, lookPath func(string) (string, error)) (cmd string, underGoRun bool) {
	slash := filepath.ToSlash(arg0)
	if strings.Contains(slash, "/go-build") && strings.Contains(slash, "/exe/") {
		return "go run .", true
	}
	if !strings.ContainsRune(arg0, os.PathSeparator) {
		return "kraftlab", false // found on $PATH
	}
	base := filepath.Base(arg0)
	if p, err := lookPath(base); err == nil && sameFile(p, arg0) {
		return base, false
	}
	return arg0, false
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

func initSelf() { self, goRun = selfCommand(os.Args[0], exec.LookPath) }
