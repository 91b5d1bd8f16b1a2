package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// routeAddController grows a dynamic quorum by a new controller, or by
// a running observer controller the body names;
// routeRemoveController removes controller {node} from its voters.
// routeUpgradeKRaftVersion upgrades a static quorum to kraft.version 1.
const (
	routeAddController       = "POST /v1/controllers"
	routeRemoveController    = "POST /v1/controllers/{node}/remove"
	routeUpgradeKRaftVersion = "POST /v1/controllers/upgrade"
)

// addBody is the optional body of an add-controller action: Node, if
// set, is a running observer controller to add instead of a new one.
type addBody struct {
	Observer bool              `json:"observer,omitempty"`
	Node     condition.NodeRef `json:"node,omitzero"`
}

const addWant = `{"observer": false, "node": "3"}`

func (s *Server) addController(w http.ResponseWriter, r *http.Request) {
	var body addBody
	if err := decodeBody(w, r, &body, true, addWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActAddController, Observer: body.Observer, Node: body.Node})
}

func (s *Server) removeController(w http.ResponseWriter, r *http.Request) {
	node, err := parseNode(r.PathValue("node"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActRemoveController, Node: node})
}

func (s *Server) upgradeKRaftVersion(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActUpgradeKRaftVersion})
}
