package raft_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/replication/raft"
)

func TestParseReplication(t *testing.T) {
	for _, r := range []raft.Replication{raft.Pull, raft.Push} {
		got, err := raft.ParseReplication(r.String())
		if err != nil || got != r {
			t.Errorf("ParseReplication(%q) = %v, %v", r, got, err)
		}
	}
	if _, err := raft.ParseReplication("both"); err == nil {
		t.Error(`ParseReplication("both"): no error`)
	}
}

// Push's own settings are checked only in push.
func TestPushConfigValidated(t *testing.T) {
	base := raft.DefaultConfig()
	base.NodeID, base.Voters, base.ClusterID = 1, []int32{1, 2, 3}, "c"
	for _, tc := range []struct {
		name string
		edit func(*raft.Config)
		want string
	}{
		{"no window", func(c *raft.Config) { c.MaxInflight = 0 }, "in-flight"},
		{"heartbeat past the fetch timeout", func(c *raft.Config) { c.HeartbeatInterval = c.FetchTimeout }, "heartbeat"},
		{"no heartbeat", func(c *raft.Config) { c.HeartbeatInterval = 0 }, "heartbeat"},
		{"unknown mode", func(c *raft.Config) { c.Replication = 7 }, "replication"},
	} {
		cfg := base
		cfg.Replication = raft.Push
		tc.edit(&cfg)
		_, err := raft.New(cfg, raft.NewMemoryLog(), &raft.MemoryQuorumStateStore{}, &recorder{}, rand.New(rand.NewPCG(1, 1)), time.Unix(0, 0))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %s", tc.name, err, tc.want)
		}
		if tc.name != "unknown mode" {
			cfg.Replication = raft.Pull
			if _, err := raft.New(cfg, raft.NewMemoryLog(), &raft.MemoryQuorumStateStore{}, &recorder{}, rand.New(rand.NewPCG(1, 1)), time.Unix(0, 0)); err != nil {
				t.Errorf("%s in pull: %v", tc.name, err)
			}
		}
	}
}
