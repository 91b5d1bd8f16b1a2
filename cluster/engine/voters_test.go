package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
)

// A static quorum (kraft.version 0) and a push quorum keep their voters:
// both refuse voter changes, saying how to start one that takes them.
func TestVoterChangesNeedADynamicPullQuorum(t *testing.T) {
	for _, tc := range []struct {
		set, want string
	}{
		{"kraft.version=0", "the quorum is static (kraft.version 0)"},
		{"kraftlab.quorum.replication=push", "a push quorum"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			cfg, err := cluster.NewConfig(1, 0, cluster.ProfileFast, []string{tc.set}, "")
			if err != nil {
				t.Fatal(err)
			}
			p := openWith(t, cfg)
			waitCond(t, p, "leader")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, a := range []cluster.Action{{Kind: cluster.ActAddController}, {Kind: cluster.ActRemoveController, Node: mustRef(t, "1")}} {
				if _, err := p.Do(ctx, a); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want an error saying %q", a, err, tc.want)
				}
			}
			if v := p.View(); len(v.Nodes) != 1 {
				t.Errorf("a refused add started a controller: %d nodes", len(v.Nodes))
			}
		})
	}
}
