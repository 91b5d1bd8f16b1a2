package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
)

// The topic routes: create with a body, delete by name.
const (
	routeCreateTopic = "POST /v1/topics"
	routeDeleteTopic = "POST /v1/topics/{topic}/delete"
)

// topicBody is the body of a create-topic action; -1 (or 0) leaves a count
// to the controller's defaults.
type topicBody struct {
	Topic             string `json:"topic"`
	Partitions        int32  `json:"partitions"`
	ReplicationFactor int16  `json:"replicationFactor"`
	// Configs are the topic's configs; the playground bounds them.
	Configs map[string]string `json:"configs,omitempty"`
}

const topicWant = `{"topic": "NAME", "partitions": P, "replicationFactor": R, "configs": {"KEY": "VALUE"}}`

func (s *Server) createTopic(w http.ResponseWriter, r *http.Request) {
	var body topicBody
	if err := decodeBody(w, r, &body, false, topicWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActCreateTopic, Topic: body.Topic, Partitions: body.Partitions, ReplicationFactor: body.ReplicationFactor, Configs: body.Configs})
}

func (s *Server) deleteTopic(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActDeleteTopic, Topic: r.PathValue("topic")})
}
