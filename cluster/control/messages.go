package control

import (
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The held-message routes: list, step and drop, each with an optional
// filter body.
const (
	routeMessages = "POST /v1/messages"
	routeStep     = "POST /v1/step"
	routeDrop     = "POST /v1/drop"
)

// messageBody picks held messages: From is the sender, To the receiver.
type messageBody struct {
	ID        uint64                `json:"id,omitempty"`
	API       string                `json:"api,omitempty"`
	From      condition.NodeRef     `json:"from,omitzero"`
	To        condition.NodeRef     `json:"to,omitzero"`
	Direction view.MessageDirection `json:"direction,omitempty"`
	All       bool                  `json:"all,omitempty"`
	Until     string                `json:"until,omitempty"`
}

const messageWant = `{"id": N, "api": "Fetch", "from": "NODE", "to": "NODE", "direction": "request|response", "all": true, "until": "COND"}`

func messageAction(kind cluster.ActionKind) func(*Server, http.ResponseWriter, *http.Request) {
	return func(s *Server, w http.ResponseWriter, r *http.Request) {
		var body messageBody
		if err := decodeBody(w, r, &body, true, messageWant); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		s.act(w, r, cluster.Action{Kind: kind, MessageID: body.ID, API: body.API, Node: body.From, Peer: body.To, Direction: body.Direction, All: body.All, Until: body.Until})
	}
}

func messagePath(kind cluster.ActionKind) string { return "/v1/" + string(kind) }

func messageBodyOf(a cluster.Action) messageBody {
	return messageBody{ID: a.MessageID, API: a.API, From: a.Node, To: a.Peer, Direction: a.Direction, All: a.All, Until: a.Until}
}
