package cluster_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// Actions travel as JSON over the control API with their node references
// spelled as users write them.
func TestNodeRefJSON(t *testing.T) {
	a := cluster.Action{Kind: cluster.ActPartition, Node: condition.LeaderRef(), Peer: condition.NodeID(3), OneWay: true}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"action":"partition","node":"leader","peer":"3","oneway":true}` {
		t.Errorf("JSON %s", b)
	}
	var back cluster.Action
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, a) {
		t.Errorf("round trip %+v, %v", back, err)
	}
	b, _ = json.Marshal(cluster.Action{Kind: cluster.ActResign})
	if string(b) != `{"action":"resign"}` {
		t.Errorf("zero refs not omitted: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"node":"nobody"}`), &back); err == nil {
		t.Error("bad node accepted from JSON")
	}
}
