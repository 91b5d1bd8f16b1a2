package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
)

// routeElectLeaders asks for leader elections, with a body.
const routeElectLeaders = "POST /v1/elect-leaders"

// electBody is the body of an elect-leaders action.
type electBody struct {
	// TopicPartitions are TOPIC-P names; none means every partition.
	TopicPartitions []string `json:"topicPartitions,omitempty"`
	Unclean         bool     `json:"unclean,omitempty"`
}

const electWant = `{"topicPartitions": ["TOPIC-P"], "unclean": false}`

func (s *Server) electLeaders(w http.ResponseWriter, r *http.Request) {
	var body electBody
	if err := decodeBody(w, r, &body, true, electWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActElectLeaders, TopicPartitions: body.TopicPartitions, Unclean: body.Unclean})
}
