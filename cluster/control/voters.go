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

func (s *Server) addController(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActAddController})
}

func (s *Server) removeController(w http.ResponseWriter, r *http.Request) {
	node, err := parseNode(r.PathValue("node"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActRemoveController, Node: node})
}
