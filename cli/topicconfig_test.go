package cli

import (
	"testing"

	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

// topics create --config KEY=VALUE sends the topic's configs with it.
func TestTopicsCreateConfigFlags(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("topics", "create", "strict", "--config", "min.insync.replicas=2", "--config", "unclean.leader.election.enable=true")
	expectRun(t, "topics create --config", code, out, errOut, ExitOK, "topic strict created", "configs min.insync.replicas=2, unclean.leader.election.enable=true")
	code, out, errOut = h.run("topics", "create", "a", "--config", "min.insync.replicas")
	expectRun(t, "--config without =", code, out, errOut, ExitUsage, `bad --config "min.insync.replicas": want KEY=VALUE`)
	code, out, errOut = h.run("topics", "create", "b", "--config", "x=1", "--config", "x=2")
	expectRun(t, "--config twice", code, out, errOut, ExitUsage, "--config x given twice")
	code, out, errOut = h.run("topics", "create", "c", "--config", "bad key=1")
	expectRun(t, "--config with a bad name", code, out, errOut, ExitUsage, `bad config name "bad key"`)
}
