package engine_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// do performs an action on the playground and fails the test if it fails.
func do(t *testing.T, p *cluster.Playground, a cluster.Action) cluster.Result {
	t.Helper()
	res, err := p.Do(context.Background(), a)
	if err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	return res
}

// ref parses a node reference the test spells right.
func ref(s string) condition.NodeRef {
	r, err := condition.ParseNodeRef(s)
	if err != nil {
		panic(err)
	}
	return r
}
