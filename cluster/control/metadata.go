package control

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// The metadata routes: ?node=REF (default: the active controller) picks
// the node; browse takes ?path=/image/..., log ?from=OFFSET&maxBytes=B.
const (
	routeMetadata    = "GET /v1/metadata"
	routeMetadataLog = "GET /v1/metadata/log"
)

func (s *Server) browser(w http.ResponseWriter) (cluster.MetadataBrowser, bool) {
	b, ok := s.ctl.(cluster.MetadataBrowser)
	if !ok {
		writeError(w, http.StatusNotImplemented, errors.New("this playground cannot show its metadata"))
	}
	return b, ok
}

// nodeQuery is the ?node= of a request, the zero NodeRef (the active
// controller) when absent.
func nodeQuery(q url.Values) (condition.NodeRef, error) {
	if !q.Has("node") {
		return condition.NodeRef{}, nil
	}
	return parseNode(q.Get("node"))
}

// metadata serves one entry of a node's metadata tree.
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	b, ok := s.browser(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	ref, err := nodeQuery(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	p := q.Get("path")
	if len(p) > cluster.MaxMetadataPath {
		writeError(w, http.StatusBadRequest, badRequestf("metadata path of %d bytes: at most %d", len(p), cluster.MaxMetadataPath))
		return
	}
	e, err := b.BrowseMetadata(r.Context(), ref, p)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// metadataLog serves a node's committed metadata log, decoded.
func (s *Server) metadataLog(w http.ResponseWriter, r *http.Request) {
	b, ok := s.browser(w)
	if !ok {
		return
	}
	q := r.URL.Query()
	ref, err := nodeQuery(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	from, err := intQuery(q, "from")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	maxBytes, err := intQuery(q, "maxBytes")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if err := cluster.ValidateMetadataLog(from, int(maxBytes)); err != nil {
		writeError(w, http.StatusBadRequest, &badRequest{msg: err.Error()})
		return
	}
	l, err := b.MetadataLog(r.Context(), ref, from, int(maxBytes))
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// intQuery is the number in q[key], 0 when absent.
func intQuery(q url.Values, key string) (int64, error) {
	v := q.Get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequestf("bad %s=%s: want a whole number", key, quote(v))
	}
	return n, nil
}

// BrowseMetadata implements cluster.MetadataBrowser.
func (c *Client) BrowseMetadata(ctx context.Context, n condition.NodeRef, p string) (cluster.MetadataEntry, error) {
	q := url.Values{"path": {p}}
	if !n.IsZero() {
		q.Set("node", n.String())
	}
	var e cluster.MetadataEntry
	err := c.do(ctx, http.MethodGet, "/v1/metadata?"+q.Encode(), nil, &e)
	return e, err
}

// MetadataLog implements cluster.MetadataBrowser.
func (c *Client) MetadataLog(ctx context.Context, n condition.NodeRef, from int64, maxBytes int) (cluster.MetadataLog, error) {
	q := url.Values{"from": {fmt.Sprint(from)}, "maxBytes": {fmt.Sprint(maxBytes)}}
	if !n.IsZero() {
		q.Set("node", n.String())
	}
	var l cluster.MetadataLog
	err := c.do(ctx, http.MethodGet, "/v1/metadata/log?"+q.Encode(), nil, &l)
	return l, err
}

var _ cluster.MetadataBrowser = (*Client)(nil)
