package benchkit

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
	// log is not synced (flush never).
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

// Factory makes a fresh, unstarted System; each benchmark case gets its own.
type Factory struct {
	Name string
	New  func() System
	// About says in a line what runs, for the report's header.
	About string
	// Optional systems run only when --systems names them.
	Optional bool
}

// SelectSystems resolves a --systems list (comma separated, in the caller's
// order) against the available factories. An empty list selects every
// system that is not optional, in the order given.
func SelectSystems(available []Factory, list string) ([]Factory, error) {
	var names []string
	for _, f := range available {
		names = append(names, f.Name)
	}
	if strings.TrimSpace(list) == "" {
		var out []Factory
		for _, f := range available {
			if !f.Optional {
				out = append(out, f)
			}
		}
		return out, nil
	}
	var out []Factory
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		found := false
		for _, f := range available {
			if f.Name == name {
				out = append(out, f)
				found = true
				break
			}
		}
		if !found {
			hint := ""
			if name == "hashicorp" || name == "etcd" {
				hint = "; the peers run from the bench module: cd bench && go run . quorum"
			}
			return nil, fmt.Errorf("unknown system %q (available: %s)%s", name, strings.Join(names, ", "), hint)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--systems %q names no system (available: %s)", list, strings.Join(names, ", "))
	}
	return out, nil
}
