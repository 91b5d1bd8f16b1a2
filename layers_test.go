package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The layers never import upward: storage ← replication ← metadata ←
// server ← cluster ← cli, tui. Every package of the module has a layer,
// so a new one must be placed here; within the top layer the user-facing
// packages reach the engine only through cluster's packages, and the
// internal helpers import nothing above storage.
func TestNoUpwardImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/kraftlab/kraftlab"
	// layers are the module's packages by prefix, lowest first; a package
	// takes the most specific prefix that matches it.
	layers := []struct {
		prefix string
		rank   int
	}{
		{"internal", 0},
		{"storage", 1},
		{"replication", 2},
		{"metadata", 3},
		{"server", 4},
		{"cluster", 5},
		{"benchkit", 6},
		{"tui", 7},
		{"cli", 8},
		{"", 9}, // main
	}
	under := func(pkg, prefix string) bool {
		return prefix == "" || pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
	}
	rankOf := func(pkg string) int {
		best, rank := -1, -1
		for _, l := range layers {
			if under(pkg, l.prefix) && len(l.prefix) > best {
				best, rank = len(l.prefix), l.rank
			}
		}
		return rank
	}
	// narrower are packages that may import less than their layer allows:
	// tui sees the playground only (cli picks the engine at start), the
	// root cluster package runs no server; the cluster clock imports
	// nothing of the module, so that every layer may read it.
	narrower := []struct {
		pkg     string
		allowed []string
	}{
		{"internal", []string{"internal", "storage"}},
		{"internal/clock", []string{"=internal/clock"}},
		{"cluster/view", []string{"storage"}},
		{"cluster/condition", []string{"cluster/view", "internal"}},
		{"tui", []string{"=cluster", "cluster/view", "cluster/condition", "cluster/scenario", "internal"}},
		{"cli", []string{"cluster", "tui", "benchkit", "internal"}},
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], mod), "/")
		if !strings.HasPrefix(f[0], mod) {
			continue
		}
		checked++
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/")
			if rankOf(dep) > rankOf(pkg) {
				t.Errorf("%s imports %s, a higher layer", pkg, dep)
			}
			for _, n := range narrower {
				if !under(pkg, n.pkg) {
					continue
				}
				ok := false
				for _, a := range n.allowed {
					// "=p" allows p itself, not the packages under it.
					exact, isExact := strings.CutPrefix(a, "=")
					ok = ok || (isExact && dep == exact) || (!isExact && under(dep, a))
				}
				if !ok {
					t.Errorf("%s imports %s; it may import only %v", pkg, dep, n.allowed)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("go list named %d of the module's packages", checked)
	}
}
