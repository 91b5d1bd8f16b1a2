package control

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// routeMetrics serves raft-metrics; ?node=REF (an id or leader) picks one
// node.
const routeMetrics = "GET /v1/metrics"

// metrics serves every node's raft-metrics (kafka.server:type=raft-metrics),
// or with ?node=REF one node's.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	v, err := s.ctl.Status(r.Context())
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	rep := v.Metrics()
	if q := r.URL.Query(); q.Has("node") {
		ref, err := parseNode(q.Get("node"))
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		id, err := ref.Resolve(&v)
		if err != nil {
			writeError(w, statusOf(err), err)
			return
		}
		for _, n := range rep.Nodes {
			if n.ID == id {
				rep.Nodes = []view.NodeMetrics{n}
				break
			}
		}
	}
	writeJSON(w, http.StatusOK, rep)
}

// Metrics returns the raft-metrics of every node, or of the one node names
// (an id or leader) when it is not empty.
func (c *Client) Metrics(ctx context.Context, node string) (view.MetricsReport, error) {
	path := "/v1/metrics"
	if node != "" {
		path += "?node=" + url.QueryEscape(node)
	}
	var rep view.MetricsReport
	err := c.do(ctx, http.MethodGet, path, nil, &rep)
	return rep, err
}
