package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

func TestCreateTopicConfigsSpelledAndChecked(t *testing.T) {
	a := cluster.Action{Kind: cluster.ActCreateTopic, Topic: "t", Partitions: 2,
		Configs: map[string]string{"unclean.leader.election.enable": "true", "min.insync.replicas": "2"}}
	if got, want := a.String(), "topics create t --partitions 2 --config min.insync.replicas=2 --config unclean.leader.election.enable=true"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	p, err := cluster.OpenWith(context.Background(), cluster.DefaultConfig(), clustertest.Start(clustertest.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	many := map[string]string{}
	for i := range 65 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	for _, c := range []struct {
		configs map[string]string
		want    string
	}{
		{map[string]string{"": "1"}, "a config needs a name"},
		{map[string]string{"min insync": "1"}, `bad config name "min insync"`},
		{map[string]string{"x": strings.Repeat("v", 32768)}, "config x's value is 32768 bytes, at most 32767"},
		{many, "65 configs, at most 64"},
	} {
		_, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActCreateTopic, Topic: "t", Configs: c.configs})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("configs %.60v: error %v, want %q", c.configs, err, c.want)
		}
	}
	if _, err := p.Do(context.Background(), cluster.Action{Kind: cluster.ActDeleteTopic, Topic: "t", Configs: map[string]string{"a": "b"}}); err == nil {
		t.Error("delete-topic with configs accepted")
	}
}
