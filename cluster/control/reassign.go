package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
)

// routeReassign moves partitions to other replicas, or cancels, lists or
// verifies such moves, with a body.
const routeReassign = "POST /v1/reassign"

// reassignBody is the body of a reassign action.
type reassignBody struct {
	// Mode is "", "cancel", "list" or "verify".
	Mode            cluster.ReassignMode `json:"mode,omitempty"`
	TopicPartitions []string             `json:"topicPartitions,omitempty"`
	Replicas        []int32              `json:"replicas,omitempty"`
	Throttle        int64                `json:"throttle,omitempty"`
}

const reassignWant = `{"mode": ""|"cancel"|"list"|"verify", "topicPartitions": ["TOPIC-P"], "replicas": [101, 102], "throttle": 1000000}`

func (s *Server) reassign(w http.ResponseWriter, r *http.Request) {
	var body reassignBody
	if err := decodeBody(w, r, &body, false, reassignWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActReassign, Reassign: body.Mode, TopicPartitions: body.TopicPartitions,
		Replicas: body.Replicas, Throttle: body.Throttle})
}
