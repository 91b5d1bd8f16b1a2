package control

import (
	"errors"
	"net/http"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// errorBody is every error answer: {"error": "...", "code": "..."}. The code
// names the cluster error kind, so that errors.Is works across the socket.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
}

// errorKinds maps the cluster's error kinds to codes and HTTP statuses that
// say whose fault it is.
var errorKinds = []struct {
	err    error
	code   string
	status int
}{
	{condition.ErrUnknownNode, "unknown-node", http.StatusNotFound},
	{cluster.ErrBadAction, "bad-action", http.StatusBadRequest},
	{cluster.ErrNodeState, "node-state", http.StatusConflict},
	{condition.ErrNoLeader, "no-leader", http.StatusConflict},
	{condition.ErrNoBaseline, "no-baseline", http.StatusConflict},
	{condition.ErrNoFollower, "no-follower", http.StatusConflict},
	{condition.ErrNoCoordinator, "no-coordinator", http.StatusConflict},
	{cluster.ErrClosed, "closed", http.StatusServiceUnavailable},
	{cluster.ErrRefused, "refused", http.StatusConflict},
	{cluster.ErrNotSimulated, "not-simulated", http.StatusConflict},
}

func statusOf(err error) int {
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.status
		}
	}
	return http.StatusInternalServerError
}

func codeOf(err error) string {
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.code
		}
	}
	return ""
}

// APIError is an error the control API answered with.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string { return e.Message }

// Is matches the cluster error kind the server reported.
func (e *APIError) Is(target error) bool {
	for _, k := range errorKinds {
		if k.err == target {
			return e.Code == k.code
		}
	}
	return false
}
