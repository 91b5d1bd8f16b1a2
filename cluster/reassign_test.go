package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
)

// A reassign action is spelled as its CLI line, and one that makes no
// sense is refused as a bad action before the engine hears of it.
func TestReassignActionsSpelledAndChecked(t *testing.T) {
	for _, c := range []struct {
		a    cluster.Action
		want string
	}{
		{cluster.Action{Kind: cluster.ActReassign, TopicPartitions: []string{"o-0", "o-1"}, Replicas: []int32{102, 103}, Throttle: 1000},
			"reassign o-0 o-1 --replicas 102,103 --throttle 1000"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignList}, "reassign --list"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignCancel, TopicPartitions: []string{"o-0"}}, "reassign --cancel o-0"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignVerify}, "reassign --verify"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
	p, err := cluster.OpenWith(context.Background(), cluster.DefaultConfig(), clustertest.Start(clustertest.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct {
		a    cluster.Action
		want string
	}{
		{cluster.Action{Kind: cluster.ActReassign, TopicPartitions: []string{"o-0"}}, "name the partitions and their replicas"},
		{cluster.Action{Kind: cluster.ActReassign, Replicas: []int32{101}}, "name the partitions and their replicas"},
		{cluster.Action{Kind: cluster.ActReassign, TopicPartitions: []string{"o"}, Replicas: []int32{101}}, `bad partition "o"`},
		{cluster.Action{Kind: cluster.ActReassign, TopicPartitions: []string{"o-0"}, Replicas: []int32{101}, Throttle: -1}, "the throttle is a rate in bytes a second"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignList, Throttle: 5}, "a throttle goes with a reassignment to replicas only"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignCancel, Replicas: []int32{101}, TopicPartitions: []string{"o-0"}}, "takes no replicas"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignCancel}, "--cancel: name the partitions"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: cluster.ReassignList, TopicPartitions: []string{"o-0"}}, "takes no partitions"},
		{cluster.Action{Kind: cluster.ActReassign, Reassign: "sideways"}, `unknown mode "sideways"`},
		{cluster.Action{Kind: cluster.ActReassign, Topic: "o", Reassign: cluster.ReassignList}, "not nodes or a topic"},
	} {
		_, err := p.Do(context.Background(), c.a)
		if !errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want a bad action saying %q", c.a, err, c.want)
		}
	}
}
