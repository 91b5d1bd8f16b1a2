package control

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// The metadata routes serve a node's tree and log, default to the active
// controller, and refuse bad queries as the caller's fault.
func TestMetadataRoutes(t *testing.T) {
	s := serve(t)
	ctx := context.Background()
	e, err := s.client.BrowseMetadata(ctx, condition.NodeRef{}, "/image/cluster/brokers")
	if err != nil || !e.Directory || strings.Join(e.Children, ",") != "101" || e.NodeID != 1 {
		t.Fatalf("browse brokers: %+v %v", e, err)
	}
	ref, _ := condition.ParseNodeRef("101")
	if e, err = s.client.BrowseMetadata(ctx, ref, "/image/cluster/brokers/101"); err != nil || e.NodeID != 101 || !strings.Contains(e.Text, "BrokerRegistration(id=101") {
		t.Fatalf("browse broker 101 on 101: %+v %v", e, err)
	}
	if _, err := s.client.BrowseMetadata(ctx, ref, "/nope"); !errors.Is(err, cluster.ErrBadAction) || !strings.Contains(err.Error(), "/ has no nope; it holds: image") {
		t.Errorf("browse a missing path: %v", err)
	}
	l, err := s.client.MetadataLog(ctx, ref, 1, 0)
	if err != nil || l.From != 1 || len(l.Dump.Batches) != 1 || l.Dump.Batches[0].Records[0].Type != "REGISTER_BROKER_RECORD" {
		t.Fatalf("metadata log from 1: %+v %v", l, err)
	}
	for _, path := range []string{
		"/v1/metadata/log?from=x", "/v1/metadata/log?from=-1", "/v1/metadata/log?maxBytes=99999999999",
		"/v1/metadata?node=nobody", "/v1/metadata?path=/" + strings.Repeat("a", cluster.MaxMetadataPath),
	} {
		err := s.client.do(ctx, http.MethodGet, path, nil, nil)
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest {
			t.Errorf("GET %.60s: %v, want 400", path, err)
		}
	}
	if err := s.client.do(ctx, http.MethodPost, "/v1/metadata", nil, nil); err == nil || !strings.Contains(err.Error(), "use GET") {
		t.Errorf("POST /v1/metadata: %v", err)
	}
}
