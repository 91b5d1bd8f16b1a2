package main

import (
	"context"
	"fmt"
	"strings"
)

// System is one 3-voter replicated log running in this process, its voters
// talking to each other over loopback TCP.
type System interface {
	// Name is the short name used by --systems and in the report.
	Name() string
	// Start brings up the three voters with their data under dir and returns
	// once a leader is elected and stable. With durable set, every voter
	// syncs its log to disk before it counts toward commit; otherwise the
	// log stays in memory (flush never).
	Start(dir string, durable bool) error
	// Propose appends payload and returns once the leader knows the record
	// is committed on a majority of voters. The system may keep payload, so
	// callers must not change it afterwards. Propose is safe to call from
	// many goroutines.
	Propose(ctx context.Context, payload []byte) error
	// Close stops the voters and fails any Propose still waiting. It may be
	// called more than once.
	Close() error
}

// factory makes a fresh, unstarted System; each benchmark case gets its own.
type factory struct {
	name string
	new  func() System
}

// registry lists the systems this binary can run, in the order they appear
// in the report. The first selected system is the reference the ratio
// columns compare against, so kraftlab comes first once its adapter exists.
func registry() []factory {
	fs := kraftlabFactories()
	fs = append(fs,
		factory{name: "hashicorp", new: func() System { return &hashicorpSystem{} }},
		factory{name: "etcd", new: func() System { return &etcdSystem{} }},
	)
	return fs
}

// selectSystems resolves the --systems list (comma separated, in the
// caller's order) against the registry. An empty list selects everything.
func selectSystems(list string) ([]factory, error) {
	all := registry()
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var names []string
	for _, f := range all {
		names = append(names, f.name)
	}
	var out []factory
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		found := false
		for _, f := range all {
			if f.name == name {
				out = append(out, f)
				found = true
				break
			}
		}
		if !found {
			hint := ""
			if name == "kraftlab" {
				hint = "; the kraftlab engine's adapter is not in this build yet (see bench/kraftlab.go)"
			}
			return nil, fmt.Errorf("unknown system %q (available: %s)%s", name, strings.Join(names, ", "), hint)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--systems %q names no system (available: %s)", list, strings.Join(names, ", "))
	}
	return out, nil
}
