package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
)

// The API's routes. Actions are POSTs named after the CLI subcommands;
// errors are {"error": "..."} with a status code saying whose fault it is.
const (
	routeStatus = "GET /v1/status"
	routeEvents = "GET /v1/events" // ?after=SEQ&follow=1, newline-delimited JSON
	routeNode   = "POST /v1/nodes/{node}/{action}"
	routeResign = "POST /v1/resign"
	routeLink   = "POST /v1/links/{a}/{b}/{action}"
	routeHeal   = "POST /v1/heal"
	routeLoad   = "POST /v1/load" // {"recordsPerSec": N, "recordBytes": B}; N 0 stops
	routeDown   = "POST /v1/down"
)

// maxBody bounds request bodies; the largest legitimate one is a few
// dozen bytes.
const maxBody = 64 << 10

// Server serves a playground's control API.
type Server struct {
	ctl    cluster.Controller
	onDown func()
	srv    *http.Server
	// ctx ends the event streams when the server shuts down, so that
	// Shutdown need not wait for followers to hang up.
	ctx    context.Context
	cancel context.CancelFunc
}

// NewServer returns a server for ctl. onDown is called, and must return
// promptly, when a client asks the playground to shut down: the owner then
// calls Shutdown and closes the playground.
func NewServer(ctl cluster.Controller, onDown func()) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ctl: ctl, onDown: onDown, ctx: ctx, cancel: cancel}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.srv.RegisterOnShutdown(cancel)
	return s
}

// Handler returns the API's HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	routes := map[string]http.HandlerFunc{
		routeStatus: s.status,
		routeEvents: s.events,
		routeNode:   s.nodeAction,
		routeResign: s.resign,
		routeLink:   s.linkAction,
		routeHeal:   s.healAll,
		routeLoad:   s.load,
		routeDown:   s.down,
	}
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: use %s", r.Method, r.URL.Path, method))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// Serve serves on ln until Shutdown; it then returns nil.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("control API: %w", err)
	}
	return nil
}

// Shutdown ends the event streams, stops accepting requests and waits for
// the ones in flight, until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancel()
	return s.srv.Shutdown(ctx)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	v, err := s.ctl.Status(r.Context())
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var after uint64
	if a := q.Get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("bad after=%q: want an event sequence number", a))
			return
		}
		after = n
	}
	follow, err := parseBool(q.Get("follow"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	enc := json.NewEncoder(w)
	for ev, err := range s.ctl.Events(ctx, after, follow) {
		if err != nil {
			return // the client went away or the server is shutting down
		}
		if enc.Encode(ev) != nil {
			return
		}
		if follow {
			rc.Flush()
		}
	}
}

func parseBool(s string) (bool, error) {
	switch s {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, fmt.Errorf("bad follow=%q: want 1 or 0", s)
}

func (s *Server) nodeAction(w http.ResponseWriter, r *http.Request) {
	kind := cluster.ActionKind(r.PathValue("action"))
	switch kind {
	case cluster.ActKill, cluster.ActStart, cluster.ActStop, cluster.ActIsolate, cluster.ActSnapshot:
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("no node action %q: want kill, start, stop, isolate or snapshot", kind))
		return
	}
	node, err := condition.ParseNodeRef(r.PathValue("node"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: kind, Node: node})
}

func (s *Server) resign(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActResign})
}

func (s *Server) healAll(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActHeal})
}

// linkBody is the optional body of a link action.
type linkBody struct {
	OneWay   bool    `json:"oneway"`
	DelayMs  int64   `json:"delayMs"`
	JitterMs int64   `json:"jitterMs"`
	Loss     float64 `json:"loss"`
}

func (s *Server) linkAction(w http.ResponseWriter, r *http.Request) {
	kind := cluster.ActionKind(r.PathValue("action"))
	switch kind {
	case cluster.ActPartition, cluster.ActHeal, cluster.ActLink:
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("no link action %q: want partition, heal or link", kind))
		return
	}
	a, err := condition.ParseNodeRef(r.PathValue("a"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	b, err := condition.ParseNodeRef(r.PathValue("b"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	var body linkBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("bad request body: %w", err))
		return
	}
	s.act(w, r, cluster.Action{Kind: kind, Node: a, Peer: b, OneWay: body.OneWay, DelayMs: body.DelayMs, JitterMs: body.JitterMs, Loss: body.Loss})
}

// loadBody is the body of a load action.
type loadBody struct {
	RecordsPerSec int `json:"recordsPerSec"`
	RecordBytes   int `json:"recordBytes"`
}

func (s *Server) load(w http.ResponseWriter, r *http.Request) {
	var body loadBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New(`want {"recordsPerSec": N, "recordBytes": B}`)
		}
		writeError(w, http.StatusBadRequest, fmt.Errorf("bad request body: %w", err))
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: body.RecordsPerSec, RecordBytes: body.RecordBytes})
}

func (s *Server) act(w http.ResponseWriter, r *http.Request, a cluster.Action) {
	res, err := s.ctl.Do(r.Context(), a)
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) down(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusAccepted, cluster.Result{Message: "the playground is shutting down"})
	s.onDown()
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorBody{Error: err.Error(), Code: codeOf(err)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
