package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The layers never import upward: storage ← replication ← metadata ←
// cluster/server ← cluster (and its view, condition, control, scenario) ←
// cli, tui; and
// the user-facing layers reach the engine only through cluster's packages.
func TestNoUpwardImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const mod = "github.com/kraftlab/kraftlab/"
	// allowed maps a package prefix to the prefixes it may import.
	rules := []struct {
		pkg     string
		allowed []string
		denied  []string
	}{
		{"storage", []string{"storage"}, nil},
		{"replication/", []string{"storage", "replication/"}, nil},
		{"metadata", []string{"storage", "replication/", "metadata"}, nil},
		{"cluster/server", []string{"storage", "replication/", "metadata"}, nil},
		{"cluster/view", []string{"storage"}, nil},
		{"cluster/condition", []string{"cluster/view", "internal/"}, nil},
		{"tui", []string{"cluster", "internal/"}, []string{"cluster/server"}},
		{"cli", []string{"cluster", "tui", "benchkit", "internal/"}, []string{"cluster/server"}},
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, ok := strings.CutPrefix(f[0], mod)
		if !ok {
			continue
		}
		for _, r := range rules {
			if pkg != r.pkg && !strings.HasPrefix(pkg, strings.TrimSuffix(r.pkg, "/")+"/") {
				continue
			}
			for _, imp := range f[1:] {
				dep, ok := strings.CutPrefix(imp, mod)
				if !ok {
					continue
				}
				under := func(list []string) bool {
					for _, a := range list {
						if dep == strings.TrimSuffix(a, "/") || strings.HasPrefix(dep, strings.TrimSuffix(a, "/")+"/") {
							return true
						}
					}
					return false
				}
				legal := under(r.allowed) && !under(r.denied)
				if !legal {
					t.Errorf("%s imports %s, against the layers", pkg, dep)
				}
			}
		}
	}
}
