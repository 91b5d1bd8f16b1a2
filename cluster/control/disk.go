package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// diskBody is the body of a disk action.
type diskBody struct {
	DelayMs int64 `json:"delayMs"`
}

const diskWant = `{"delayMs": N} (0 makes the disk normal again)`

// disk slows a node's disk down, or makes it normal again: the node
// action disk of routeNode (POST /v1/nodes/{node}/disk), with a body.
func (s *Server) disk(w http.ResponseWriter, r *http.Request) {
	node, err := parseNode(r.PathValue("node"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	var body diskBody
	if err := decodeBody(w, r, &body, false, diskWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if maxMs := view.MaxDiskDelay.Milliseconds(); body.DelayMs < 0 || body.DelayMs > maxMs {
		writeError(w, http.StatusBadRequest, badRequestf("disk: delayMs %d must be between 0 and %d (%v)", body.DelayMs, maxMs, view.MaxDiskDelay))
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActDisk, Node: node, DelayMs: body.DelayMs})
}
