package cli

import (
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"strings"
)

// self is how the user runs kraftlab, for the commands that up's banner
// and the hints print: "kraftlab" when it is on $PATH, "go run ." under
// go run, else the path it was started by (./kraftlab). Execute sets it.
var self = "kraftlab"

// goRun is set when kraftlab runs under go run: its commands then only
// work from the source folder, which the banner names.
var goRun bool

// selfCommand works out self from os.Args[0]. go run builds into a
// temporary go-build folder, which the next go run no longer has; since
// Go 1.24 it runs a binary it built before from Go's build cache
// ($GOCACHE/ab/abcdef…-d/kraftlab), which is no command to type either.
func selfCommand(arg0 string, lookPath func(string) (string, error)) (cmd string, underGoRun bool) {
	slash := filepath.ToSlash(arg0)
	if strings.Contains(slash, "/go-build") && strings.Contains(slash, "/exe/") || inBuildCache(slash) {
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

// cacheEntry is a folder of Go's build cache that holds an output, such
// as go run's binary: the hex of an action ID, then -d.
var cacheEntry = regexp.MustCompile(`^([0-9a-f]{2})[0-9a-f]{30,}-d$`)

// inBuildCache reports whether path (slash-separated) is a file in Go's
// build cache: in an entry folder, itself in the folder named for the
// entry's first two hex digits.
func inBuildCache(path string) bool {
	dir := pathpkg.Dir(path)
	m := cacheEntry.FindStringSubmatch(pathpkg.Base(dir))
	return m != nil && pathpkg.Base(pathpkg.Dir(dir)) == m[1]
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
