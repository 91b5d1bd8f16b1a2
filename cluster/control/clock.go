package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
)

// routeClock reads or sets the cluster clock, with an optional body.
const routeClock = "POST /v1/clock"

// clockBody is the body of a clock action; none only reads the clock.
type clockBody struct {
	Clock     cluster.ClockOp `json:"clock,omitempty"`
	Slow      int             `json:"slow,omitempty"`
	AdvanceMs int64           `json:"advanceMs,omitempty"`
}

const clockWant = `{"clock": "pause|resume|slow|advance", "slow": N, "advanceMs": MS}`

func (s *Server) clock(w http.ResponseWriter, r *http.Request) {
	var body clockBody
	if err := decodeBody(w, r, &body, true, clockWant); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActClock, Clock: body.Clock, Slow: body.Slow, AdvanceMs: body.AdvanceMs})
}
