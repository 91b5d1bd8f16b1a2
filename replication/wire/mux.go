package wire

import (
	"fmt"
	"slices"
)

// Mux is a node's dispatcher by API key, as Kafka's request handlers route
// a request to the part of the server that owns its API: each part of a
// node registers the APIs it serves, and the node's one Server, given
// Mux.APIs and the Mux as its Handler, advertises exactly those in
// ApiVersions. Register every API before the Server starts; a Mux is not
// safe for concurrent registration, and is read-only once serving.
type Mux struct {
	routes map[int16]route
}

type route struct {
	api APIRange
	h   Handler
}

// NewMux returns an empty dispatcher.
func NewMux() *Mux { return &Mux{routes: make(map[int16]route)} }

// Handle routes requests for api's key to h. It fails if another part
// already serves that key or if the range is not one kmsg knows.
func (m *Mux) Handle(api APIRange, h Handler) error {
	if h == nil {
		return fmt.Errorf("wire: %s: nil handler", apiName(api.Key))
	}
	if r, ok := m.routes[api.Key]; ok {
		return fmt.Errorf("wire: %s is already served (versions %d..%d)", apiName(api.Key), r.api.MinVersion, r.api.MaxVersion)
	}
	if _, err := newAPITable([]APIRange{api}, false); err != nil {
		return fmt.Errorf("wire: %w", err)
	}
	m.routes[api.Key] = route{api, h}
	return nil
}

// APIs lists the registered ranges by key, for ServerConfig.APIs.
func (m *Mux) APIs() []APIRange {
	out := make([]APIRange, 0, len(m.routes))
	for _, r := range m.routes {
		out = append(out, r.api)
	}
	slices.SortFunc(out, func(a, b APIRange) int { return int(a.Key) - int(b.Key) })
	return out
}

// ServeKafka implements Handler. The Server only hands it requests for
// advertised APIs and versions, so every key has a route.
func (m *Mux) ServeKafka(req *Request) {
	r, ok := m.routes[req.Key()]
	if !ok {
		// Unreachable through a Server configured with m.APIs(); a
		// request from elsewhere is dropped with its connection.
		req.conn.close()
		return
	}
	r.h.ServeKafka(req)
}
