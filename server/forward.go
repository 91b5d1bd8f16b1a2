package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/replication/quorum"
	"github.com/kraftlab/kraftlab/replication/raft"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controllerChannel is a node's connections to the controllers, one
// member-authenticated wire.Client per controller, dialled on first use
// (Kafka's NodeToControllerChannelManager). The forwarder and the
// lifecycle manager share it. Every message goes through the
// playground's links, so a broker cut off from a controller cannot reach
// it.
type controllerChannel struct {
	from    int32
	cfg     wire.ClientConfig // From, Links, Counters, SASL, Logger, DialTimeout
	address func(id int32) (string, bool)

	mu      sync.Mutex
	clients map[int32]*wire.Client
	closed  bool
}

func newControllerChannel(s *Server) *controllerChannel {
	return &controllerChannel{
		from:    s.id,
		cfg:     s.memberClientConfig(),
		address: s.cfg.Raft.Peers,
		clients: make(map[int32]*wire.Client),
	}
}

// memberClientConfig is how the node's parts reach other nodes: as a
// member, through the playground's links, counted.
func (s *Server) memberClientConfig() wire.ClientConfig {
	rc := s.cfg.Raft
	return wire.ClientConfig{
		From:        s.id,
		Links:       rc.Links,
		Counters:    rc.Counters,
		DialTimeout: rc.Raft.RequestTimeout,
		SASL:        wire.MemberMechanism(rc.Secret),
		Logger:      s.log,
		Clock:       s.cfg.Clock,
	}
}

// client returns the connection to controller id.
func (ch *controllerChannel) client(id int32) (*wire.Client, error) {
	if id < 0 {
		return nil, fmt.Errorf("node %d knows no active controller", ch.from)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return nil, wire.ErrClosed
	}
	if c := ch.clients[id]; c != nil {
		return c, nil
	}
	addr, ok := ch.address(id)
	if !ok {
		return nil, fmt.Errorf("node %d: no address known for node %d", ch.from, id)
	}
	cfg := ch.cfg
	cfg.To, cfg.Addr = id, addr
	c, err := wire.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	ch.clients[id] = c
	return c, nil
}

// send sends req to controller id and waits for its answer until ctx ends.
func (ch *controllerChannel) send(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	c, err := ch.client(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s to node %d: %w", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp, nil
}

func (ch *controllerChannel) close() {
	ch.mu.Lock()
	ch.closed = true
	clients := ch.clients
	ch.clients = nil
	ch.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
}

// forwardedAPI is one API a broker does not serve itself but sends on to
// the active controller, as Kafka's KafkaApis.forwardToController does.
type forwardedAPI struct {
	api wire.APIRange
	// failed is the API's answer when the forward found no controller in
	// time: code for every topic (Kafka's getErrorResponse).
	failed func(req kmsg.Request, code int16) kmsg.Response
	// notController reports an answer from a controller that is not the
	// active one, after which the forward goes to the next one.
	notController func(resp kmsg.Response) bool
}

// The versions of the forwarded APIs that Kafka 4.4 serves
// (clients/src/main/resources/common/message/*Request.json; kmsg encodes
// them all). A broker advertises these cut to what its controllers serve.
var (
	createTopicsVersions     = wire.APIRange{Key: kmsg.CreateTopics.Int16(), MinVersion: 2, MaxVersion: 7}
	deleteTopicsVersions     = wire.APIRange{Key: kmsg.DeleteTopics.Int16(), MinVersion: 1, MaxVersion: 6}
	createPartitionsVersions = wire.APIRange{Key: kmsg.CreatePartitions.Int16(), MinVersion: 0, MaxVersion: 3}
	describeQuorumVersions   = wire.APIRange{Key: kmsg.DescribeQuorum.Int16(), MaxVersion: raft.DescribeQuorumVersion}
	updateFeaturesVersions   = wire.APIRange{Key: kmsg.UpdateFeatures.Int16(), MaxVersion: 2}
)

// forwardedAPIs is the table of what a broker forwards.
var forwardedAPIs = []forwardedAPI{
	{
		// kafka-features --bootstrap-server: a kraft.version upgrade.
		api: updateFeaturesVersions,
		failed: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrUpdateFeaturesResponse()
			resp.ErrorCode = code
			return resp
		},
		notController: func(r kmsg.Response) bool {
			return r.(*kmsg.UpdateFeaturesResponse).ErrorCode == kerr.NotController.Code
		},
	},
	{
		api: describeQuorumVersions,
		failed: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrDescribeQuorumResponse()
			resp.ErrorCode = code
			return resp
		},
		// A voter that does not lead answers the bare error
		// (KafkaRaftClient.handleDescribeQuorumRequest).
		notController: func(r kmsg.Response) bool {
			code := r.(*kmsg.DescribeQuorumResponse).ErrorCode
			return code == kerr.NotLeaderForPartition.Code || code == kerr.NotController.Code
		},
	},
	{
		api: createTopicsVersions,
		failed: func(r kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrCreateTopicsResponse()
			for _, t := range r.(*kmsg.CreateTopicsRequest).Topics {
				rt := kmsg.NewCreateTopicsResponseTopic()
				rt.Topic, rt.ErrorCode = t.Topic, code
				resp.Topics = append(resp.Topics, rt)
			}
			return resp
		},
		notController: func(r kmsg.Response) bool {
			for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
				if t.ErrorCode == kerr.NotController.Code {
					return true
				}
			}
			return false
		},
	},
	{
		api: deleteTopicsVersions,
		failed: func(r kmsg.Request, code int16) kmsg.Response {
			req := r.(*kmsg.DeleteTopicsRequest)
			resp := kmsg.NewPtrDeleteTopicsResponse()
			add := func(name *string, id [16]byte) {
				rt := kmsg.NewDeleteTopicsResponseTopic()
				rt.Topic, rt.TopicID, rt.ErrorCode = name, id, code
				resp.Topics = append(resp.Topics, rt)
			}
			// v6 names topics by name or id; before, by name only.
			if req.GetVersion() >= 6 {
				for _, t := range req.Topics {
					add(t.Topic, t.TopicID)
				}
			} else {
				for _, name := range req.TopicNames {
					add(&name, [16]byte{})
				}
			}
			return resp
		},
		notController: func(r kmsg.Response) bool {
			for _, t := range r.(*kmsg.DeleteTopicsResponse).Topics {
				if t.ErrorCode == kerr.NotController.Code {
					return true
				}
			}
			return false
		},
	},
	{
		api: createPartitionsVersions,
		failed: func(r kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrCreatePartitionsResponse()
			for _, t := range r.(*kmsg.CreatePartitionsRequest).Topics {
				rt := kmsg.NewCreatePartitionsResponseTopic()
				rt.Topic, rt.ErrorCode = t.Topic, code
				resp.Topics = append(resp.Topics, rt)
			}
			return resp
		},
		notController: func(r kmsg.Response) bool {
			for _, t := range r.(*kmsg.CreatePartitionsResponse).Topics {
				if t.ErrorCode == kerr.NotController.Code {
					return true
				}
			}
			return false
		},
	},
	incrementalAlterConfigsForward,
	electLeadersForward,
	alterReassignmentsForward,
	listReassignmentsForward,
}

// forwarder is a broker's part that sends the controller's APIs
// (DescribeQuorum, CreateTopics, DeleteTopics, CreatePartitions) on to the
// active controller and relays the answer at the client's version, as
// Kafka's ForwardingManager does, without Kafka's EnvelopeRequest. Like
// Kafka's NodeToControllerRequestThread it tries again, on the controller
// it then knows, after a failed send or an answer saying NOT_CONTROLLER,
// until the forward's time is up; then the client gets the API's answer
// with REQUEST_TIMED_OUT.
type forwarder struct {
	id  int32
	log *slog.Logger
	ch  *controllerChannel
	// controller is the active controller as the node's raft client
	// knows it: the quorum's leader, -1 if none.
	controller func() int32
	// timeout bounds a forward from its arrival to its answer; each
	// try is bounded by tryTimeout and followed, if it fails, by backoff.
	timeout, tryTimeout, backoff time.Duration
	apis                         []forwardedAPI

	// queueLength counts the forwards waiting for an answer (Kafka's
	// ForwardingManager QueueLength metric).
	queueLength atomic.Int64

	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // guards closed and wg.Add against close
	closed bool
	wg     sync.WaitGroup
}

// controllerAPIs are the APIs kraftlab's controllers serve to the
// forwarder's requests (the raft client's and the quorum controller's); a
// broker forwards only those.
var controllerAPIs = append(slices.Clone(quorum.VoterAPIs), controller.APIs...)

// newForwarder is a broker's forwarder. The forward's time is what it
// takes a quorum that lost its leader to notice (fetch timeout), elect
// another (election timeout) and answer (request timeout); Kafka waits
// 60 s.
func newForwarder(s *Server) *forwarder {
	rc := s.cfg.Raft.Raft
	f := &forwarder{
		id: s.id, log: s.log, ch: newControllerChannel(s),
		controller: func() int32 { return s.raft.Status().LeaderID },
		timeout:    rc.FetchTimeout + rc.ElectionTimeout + rc.RequestTimeout,
		tryTimeout: rc.RequestTimeout, backoff: rc.RetryBackoff,
		apis: cutToController(forwardedAPIs, controllerAPIs),
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f
}

// cutToController keeps the forwarded APIs the controllers serve, each
// with the versions both serve, as Kafka's broker advertises a forwarded
// API at the versions it shares with the active controller
// (ApiVersionManager with the controller's NodeApiVersions). A request
// keeps its client's version, so it must be one the controller takes.
func cutToController(apis []forwardedAPI, served []wire.APIRange) []forwardedAPI {
	var out []forwardedAPI
	for _, a := range apis {
		for _, c := range served {
			if c.Key != a.api.Key {
				continue
			}
			a.api.MinVersion = max(a.api.MinVersion, c.MinVersion)
			a.api.MaxVersion = min(a.api.MaxVersion, c.MaxVersion)
			if a.api.MinVersion <= a.api.MaxVersion {
				out = append(out, a)
			}
		}
	}
	return out
}

func (f *forwarder) register(mux *wire.Mux) error {
	for _, a := range f.apis {
		err := mux.Handle(a.api, wire.HandlerFunc(func(req *wire.Request) { f.serve(a, req) }))
		if err != nil {
			return fmt.Errorf("node %d: %w", f.id, err)
		}
	}
	return nil
}

// serve forwards one request on a goroutine of its own, so that a slow
// controller never holds up the client's connection; the request's memory
// stays charged to the listener until it is answered, which bounds how
// many run.
func (f *forwarder) serve(a forwardedAPI, req *wire.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		req.Respond(a.failed(req.Body, kerr.RequestTimedOut.Code))
		return
	}
	f.wg.Add(1)
	f.queueLength.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.queueLength.Add(-1)
		req.Respond(f.forward(a, req.Body, req.Closed()))
	}()
}

// async forwards body, of API key, on a goroutine of its own and hands
// the answer to done; it reports false if the forwarder is closed or does
// not forward that API.
func (f *forwarder) async(key int16, body kmsg.Request, done func(kmsg.Response)) bool {
	i := slices.IndexFunc(f.apis, func(a forwardedAPI) bool { return a.api.Key == key })
	if i < 0 {
		return false
	}
	body.SetVersion(min(body.GetVersion(), f.apis[i].api.MaxVersion))
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		done(f.forward(f.apis[i], body, nil))
	}()
	return true
}

// forward returns the active controller's answer to body, or the API's
// REQUEST_TIMED_OUT answer.
func (f *forwarder) forward(a forwardedAPI, body kmsg.Request, clientGone <-chan struct{}) kmsg.Response {
	ctx, cancel := f.ch.cfg.Clock.WithTimeout(f.ctx, f.timeout)
	defer cancel()
	for {
		to := f.controller()
		tryCtx, tryCancel := f.ch.cfg.Clock.WithTimeout(ctx, f.tryTimeout)
		resp, err := f.ch.send(tryCtx, to, body)
		tryCancel()
		switch {
		case err == nil && !a.notController(resp):
			return resp
		case err == nil:
			f.log.Debug("forward: not the active controller", "api", kmsg.NameForKey(a.api.Key), "to", to)
		case !errors.Is(err, context.DeadlineExceeded):
			f.log.Debug("forward failed", "api", kmsg.NameForKey(a.api.Key), "to", to, "err", err)
		}
		select {
		case <-ctx.Done():
			return a.failed(body, kerr.RequestTimedOut.Code)
		case <-clientGone:
			return nil
		case <-f.ch.cfg.Clock.After(f.backoff):
		}
	}
}

// close ends every forward in flight (each answers REQUEST_TIMED_OUT to a
// client still there) and waits for them, then closes the connections.
func (f *forwarder) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait()
	f.ch.close()
}
