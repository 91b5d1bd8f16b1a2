package control

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// routeTrace serves the messages between nodes the links traced:
// ?last=N keeps the last N, ?sinceMs=MS those sent in the last MS of
// cluster time.
const routeTrace = "GET /v1/trace"

func (s *Server) trace(w http.ResponseWriter, r *http.Request) {
	t, ok := s.ctl.(cluster.Tracer)
	if !ok {
		writeError(w, http.StatusNotImplemented, errors.New("this playground keeps no trace of its messages"))
		return
	}
	q := r.URL.Query()
	last, err := intQuery(q, "last")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	sinceMs, err := intQuery(q, "sinceMs")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	const maxMs = int64(1<<63-1) / int64(time.Millisecond)
	if last > int64(^uint32(0)>>1) || sinceMs > maxMs {
		writeError(w, http.StatusBadRequest, badRequestf("last=%d sinceMs=%d: too large", last, sinceMs))
		return
	}
	tq := cluster.TraceQuery{Last: int(last), Since: time.Duration(sinceMs) * time.Millisecond}
	if err := tq.Validate(); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	tr, err := t.Trace(r.Context(), tq)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, tr)
}

// Trace implements cluster.Tracer.
func (c *Client) Trace(ctx context.Context, q cluster.TraceQuery) (view.Trace, error) {
	v := url.Values{}
	if q.Last != 0 {
		v.Set("last", strconv.Itoa(q.Last))
	}
	if q.Since != 0 {
		v.Set("sinceMs", strconv.FormatInt(q.Since.Milliseconds(), 10))
	}
	var t view.Trace
	err := c.do(ctx, http.MethodGet, "/v1/trace?"+v.Encode(), nil, &t)
	return t, err
}

var _ cluster.Tracer = (*Client)(nil)
