package control

import (
	"context"
	"errors"
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
)

// routeSay publishes words for everyone watching: {"text": "..."}.
const routeSay = "POST /v1/say"

// sayBody is the body of a say.
type sayBody struct {
	Text string `json:"text"`
}

const sayWant = `{"text": "one line"}`

// say publishes an EventSay on the playground's event stream.
func (s *Server) say(w http.ResponseWriter, r *http.Request) {
	sayer, ok := s.ctl.(cluster.Sayer)
	if !ok {
		writeError(w, http.StatusNotImplemented, errors.New("this playground cannot say things"))
		return
	}
	var body sayBody
	err := decodeBody(w, r, &body, false, sayWant)
	if err == nil {
		if verr := cluster.ValidateSay(body.Text); verr != nil {
			err = &badRequest{msg: verr.Error()}
		}
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	ev, err := sayer.Say(r.Context(), body.Text)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, ev)
}

// Say implements cluster.Sayer.
func (c *Client) Say(ctx context.Context, text string) (cluster.Event, error) {
	var ev cluster.Event
	err := c.do(ctx, http.MethodPost, "/v1/say", sayBody{Text: text}, &ev)
	return ev, err
}

var _ cluster.Sayer = (*Client)(nil)
