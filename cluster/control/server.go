package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// The API's routes. Actions are POSTs named after the CLI subcommands;
// errors are {"error": "..."} with a status code saying whose fault it is.
const (
	routeStatus = "GET /v1/status"
	routeEvents = "GET /v1/events" // ?after=SEQ&follow=1, newline-delimited JSON
	routeNode   = "POST /v1/nodes/{node}/{action}"
	routeResign = "POST /v1/resign"
	routeMark   = "POST /v1/mark"
	routeLink   = "POST /v1/links/{a}/{b}/{action}"
	routeHeal   = "POST /v1/heal"
	routeLoad   = "POST /v1/load" // {"recordsPerSec": N, "recordBytes": B}; N 0 stops
	routeDown   = "POST /v1/down"
)

// maxBody bounds request bodies; the largest legitimate one is a few
// dozen bytes.
const maxBody = 64 << 10

// Limits of a connection. A request's headers must arrive within
// readHeaderTimeout and the whole request within readTimeout (a client that
// sends half a body is cut off, not waited for forever); an idle kept-alive
// connection is closed after idleTimeout. There is no write timeout: an
// event stream (events --follow) writes for as long as its client listens
// (net/http lifts the read deadline once a request is read, so the read
// timeout does not end a stream either). The request line and
// headers are bounded by maxHeaderBytes (a legitimate request needs a few
// hundred bytes).
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 8 << 10
)

// maxQuoted bounds how much user input an error message quotes.
const maxQuoted = 100

// Server serves a playground's control API.
type Server struct {
	ctl    cluster.Operator
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
func NewServer(ctl cluster.Operator, onDown func()) *Server {
	return newServer(ctl, onDown, readHeaderTimeout, readTimeout, idleTimeout)
}

// newServer is NewServer with the connection timeouts given (tests shorten
// them).
func newServer(ctl cluster.Operator, onDown func(), header, read, idle time.Duration) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ctl: ctl, onDown: onDown, ctx: ctx, cancel: cancel}
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: header,
		ReadTimeout:       read,
		IdleTimeout:       idle,
		MaxHeaderBytes:    maxHeaderBytes,
		// The standard library's own complaints (a bad request line, a TLS
		// handshake on the socket) would go to the terminal of up.
		ErrorLog: log.New(io.Discard, "", 0),
	}
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
		routeMark:   s.mark,
		routeLink:   s.linkAction,
		routeHeal:   s.healAll,
		routeLoad:   s.load,
		routeDown:   s.down,
	}
	routes[routeMetrics] = s.metrics
	routes[routeSay] = s.say
	routes[routeCreateTopic] = s.createTopic
	routes[routeDeleteTopic] = s.deleteTopic
	routes[routeElectLeaders] = s.electLeaders
	routes[routeReassign] = s.reassign
	routes[routeClock] = s.clock
	routes[routeAddController] = s.addController
	routes[routeRemoveController] = s.removeController
	routes[routeUpgradeKRaftVersion] = s.upgradeKRaftVersion
	for route, kind := range map[string]cluster.ActionKind{routeMessages: cluster.ActMessages, routeStep: cluster.ActStep, routeDrop: cluster.ActDrop} {
		act := messageAction(kind)
		routes[route] = func(w http.ResponseWriter, r *http.Request) { act(s, w, r) }
	}
	routes[routeRun] = s.run
	routes[routeRewind] = s.rewind
	routes[routeHistory] = s.history
	routes[routeMetadata] = s.metadata
	routes[routeMetadataLog] = s.metadataLog
	routes[routeTrace] = s.trace
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: use %s", methodOf(r), quote(r.URL.Path), method))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", methodOf(r), quote(r.URL.Path)))
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
			writeError(w, http.StatusBadRequest, fmt.Errorf("bad after=%s: want an event sequence number", quote(a)))
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
	return false, fmt.Errorf("bad follow=%s: want 1 or 0", quote(s))
}

// methodOf is the request's method for an error message: a token (net/http
// checks), cut if long.
func methodOf(r *http.Request) string {
	if len(r.Method) > 20 {
		return quote(r.Method)
	}
	return r.Method
}

// quote quotes user input for an error message, cut to maxQuoted bytes.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// parseNode parses a node reference from the path, quoting at most
// maxQuoted bytes of it when it is bad.
func parseNode(v string) (condition.NodeRef, error) {
	if len(v) > maxQuoted {
		return condition.NodeRef{}, fmt.Errorf("bad node %s: want a node id or leader", quote(v))
	}
	return condition.ParseNodeRef(v)
}

// decodeBody decodes a JSON request body into v strictly: one object with
// only v's fields and nothing after it. An empty body leaves v alone when
// optional, and is an error naming want otherwise. Errors quote little of
// the input.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool, want string) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF) && optional:
			return nil
		case errors.Is(err, io.EOF):
			return fmt.Errorf("bad request body: empty; want %s", want)
		case errors.As(err, &tooBig):
			return fmt.Errorf("bad request body: more than %d bytes; want %s", maxBody, want)
		case isTimeout(err):
			return fmt.Errorf("bad request body: not received within %v; want %s", readTimeout, want)
		}
		return fmt.Errorf("bad request body: %s; want %s", clip(err.Error()), want)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("bad request body: data after the JSON object; want %s alone", want)
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// clip cuts a message that may carry user input (a JSON decoder's, which
// names unknown fields) to a few times maxQuoted bytes.
func clip(msg string) string {
	const n = 2 * maxQuoted
	if len(msg) <= n {
		return msg
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// badRequest is a request the API refuses before the playground sees it;
// it carries the playground's bad-action code.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }
func (e *badRequest) Unwrap() error { return cluster.ErrBadAction }

func badRequestf(format string, args ...any) error {
	return &badRequest{msg: fmt.Sprintf(format, args...)}
}

func (s *Server) nodeAction(w http.ResponseWriter, r *http.Request) {
	kind := cluster.ActionKind(r.PathValue("action"))
	switch kind {
	case cluster.ActKill, cluster.ActStart, cluster.ActStop, cluster.ActIsolate, cluster.ActSnapshot, cluster.ActWipe, cluster.ActHeal:
	case cluster.ActDisk:
		s.disk(w, r)
		return
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("no node action %s: want kill, start, stop, isolate, snapshot, wipe, heal or disk", quote(string(kind))))
		return
	}
	node, err := parseNode(r.PathValue("node"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: kind, Node: node})
}

func (s *Server) resign(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActResign})
}

func (s *Server) mark(w http.ResponseWriter, r *http.Request) {
	s.act(w, r, cluster.Action{Kind: cluster.ActMark})
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

const linkWant = `{"oneway": B, "delayMs": N, "jitterMs": N, "loss": P} (every field optional)`

// check keeps each field in the range the playground takes, so that no
// value overflows on its way to a duration.
func (b linkBody) check() error {
	maxMs := view.MaxLinkDelay.Milliseconds()
	switch {
	case b.DelayMs < 0 || b.DelayMs > maxMs:
		return badRequestf("link: delayMs %d must be between 0 and %d (%v)", b.DelayMs, maxMs, view.MaxLinkDelay)
	case b.JitterMs < 0 || b.JitterMs > maxMs:
		return badRequestf("link: jitterMs %d must be between 0 and %d (%v)", b.JitterMs, maxMs, view.MaxLinkDelay)
	case !(b.Loss >= 0 && b.Loss <= 1):
		return badRequestf("link: loss %v must be between 0 and 1 (0%% to 100%%)", b.Loss)
	}
	return nil
}

func (s *Server) linkAction(w http.ResponseWriter, r *http.Request) {
	kind := cluster.ActionKind(r.PathValue("action"))
	switch kind {
	case cluster.ActPartition, cluster.ActHeal, cluster.ActLink:
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("no link action %s: want partition, heal or link", quote(string(kind))))
		return
	}
	a, err := parseNode(r.PathValue("a"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	b, err := parseNode(r.PathValue("b"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	var body linkBody
	err = decodeBody(w, r, &body, true, linkWant)
	if err == nil {
		err = body.check()
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: kind, Node: a, Peer: b, OneWay: body.OneWay, DelayMs: body.DelayMs, JitterMs: body.JitterMs, Loss: body.Loss})
}

// loadBody is the body of a load action.
type loadBody struct {
	RecordsPerSec int `json:"recordsPerSec"`
	RecordBytes   int `json:"recordBytes"`
	// Topic, if set, makes it the topic load, through the brokers.
	Topic string `json:"topic,omitempty"`
	// StartedBy says where the action came from: cli, scenario or screen.
	StartedBy view.Origin `json:"startedBy,omitempty"`
}

const loadWant = `{"recordsPerSec": N, "recordBytes": B, "topic": T, "startedBy": "cli"|"scenario"|"screen"}`

// check keeps each field in the range the playground takes (recordBytes 0
// is the default size).
func (b loadBody) check() error {
	size := b.RecordBytes
	if size == 0 {
		size = cluster.DefaultLoadRecordBytes
	} else if err := cluster.ValidateLoad(1, size); err != nil {
		// Checked even when the load stops, so that no value is taken silently.
		return &badRequest{msg: err.Error() + " (0: the default)"}
	}
	if err := cluster.ValidateLoad(b.RecordsPerSec, size); err != nil {
		return &badRequest{msg: err.Error()}
	}
	if !b.StartedBy.Valid() {
		return &badRequest{msg: fmt.Sprintf("startedBy %q: want cli, scenario or screen", b.StartedBy)}
	}
	return nil
}

func (s *Server) load(w http.ResponseWriter, r *http.Request) {
	var body loadBody
	err := decodeBody(w, r, &body, false, loadWant)
	if err == nil {
		err = body.check()
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	s.act(w, r, cluster.Action{Kind: cluster.ActLoad, RecordsPerSec: body.RecordsPerSec, RecordBytes: body.RecordBytes, Topic: body.Topic, StartedBy: body.StartedBy})
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
