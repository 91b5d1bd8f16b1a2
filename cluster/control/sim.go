package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
)

// A simulated playground's routes (kraftlab up --sim): run its time until
// a condition holds, rewind it, read its event log.
const (
	routeRun     = "POST /v1/sim/run"
	routeRewind  = "POST /v1/sim/rewind"
	routeHistory = "POST /v1/sim/history"
)

// runBody is the body of a run: the condition, as wait takes it, and
// the most simulated time to run.
type runBody struct {
	Until   string `json:"until"`
	LimitMs int64  `json:"limitMs"`
}

const runWant = `{"until": "CONDITION", "limitMs": MS}`

// rewindBody is the body of a rewind.
type rewindBody struct {
	Step   int `json:"step"`
	Branch int `json:"branch,omitempty"`
	By     int `json:"by,omitempty"`
}

const rewindWant = `{"step": N, "branch": B} or {"by": N}`

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	var body runBody
	if err := decodeBody(w, r, &body, false, runWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActRun, Until: body.Until, AdvanceMs: body.LimitMs})
}

func (s *Server) rewind(w http.ResponseWriter, r *http.Request) {
	var body rewindBody
	if err := decodeBody(w, r, &body, false, rewindWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActRewind, Step: body.Step, Branch: body.Branch, By: body.By})
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActHistory})
}
