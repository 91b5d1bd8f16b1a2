package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
)

// A static playground upgrades to kraft.version 1 (controllers upgrade)
// and then grows by a controller; a second upgrade has nothing to do.
func TestStaticQuorumUpgradesThenGrows(t *testing.T) {
	cfg, err := cluster.NewConfig(3, 0, cluster.ProfileFast, []string{"kraft.version=0"}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := openWith(t, cfg)
	waitCond(t, p, "leader")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActUpgradeKRaftVersion}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActUpgradeKRaftVersion}); err == nil || !strings.Contains(err.Error(), "dynamic already") {
		t.Errorf("a second upgrade: %v", err)
	}
	if _, err := p.Do(ctx, cluster.Action{Kind: cluster.ActAddController}); err != nil {
		t.Fatal(err)
	}
	waitCond(t, p, "voters == 4")
}
