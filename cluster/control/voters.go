package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
)

// routeAddController grows a dynamic quorum by a new controller;
// routeRemoveController removes controller {node} from its voters.
const (
	routeAddController    = "POST /v1/controllers"
	routeRemoveController = "POST /v1/controllers/{node}/remove"
)

// addBody is the optional body of an add-controller action.
type addBody struct {
	Observer bool `json:"observer,omitempty"`
}

const addWant = `{"observer": false}`

func (s *Server) addController(w http.ResponseWriter, r *http.Request) {
	var body addBody
	if err := decodeBody(w, r, &body, true, addWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActAddController, Observer: body.Observer})
}

func (s *Server) removeController(w http.ResponseWriter, r *http.Request) {
	node, err := parseNode(r.PathValue("node"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActRemoveController, Node: node})
}
