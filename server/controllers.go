package server

import (
	"fmt"
	"net"
	"strconv"

	"github.com/kraftlab/kraftlab/metadata/cache"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// registerDescribeControllers serves DescribeCluster on a controller, for
// Kafka's --bootstrap-controller tools: the voters at their listeners and
// the quorum's leader as the active controller. Kafka asks ALTER on the
// cluster for it; the playground serves it to anyone, as DescribeQuorum.
func (s *Server) registerDescribeControllers(mux *wire.Mux) error {
	api := wire.APIRange{Key: kmsg.DescribeCluster.Int16(), MinVersion: cache.DescribeClusterMinVersion, MaxVersion: cache.DescribeClusterMaxVersion}
	err := mux.Handle(api, wire.HandlerFunc(func(req *wire.Request) {
		body, ok := req.Body.(*kmsg.DescribeClusterRequest)
		if !ok {
			return
		}
		_, hasMV := s.image().Features().MetadataVersion()
		req.Respond(cache.DescribeControllers(s.cfg.Raft.Raft.ClusterID, s.controllers(), s.raft.Status().LeaderID, hasMV, body))
	}))
	if err != nil {
		return fmt.Errorf("node %d: %w", s.id, err)
	}
	return nil
}

// controllers are the voters in force on the node (its static voters, or
// a dynamic quorum's latest voter set) at the listeners the node knows for
// them.
func (s *Server) controllers() []cache.Controller {
	var out []cache.Controller
	for _, id := range s.raft.Status().Voters {
		addr := s.Addr()
		if id != s.id {
			var ok bool
			if addr, ok = s.cfg.Raft.Peers(id); !ok {
				continue
			}
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		p, err := strconv.ParseInt(port, 10, 32)
		if err != nil {
			continue
		}
		out = append(out, cache.Controller{ID: id, Host: host, Port: int32(p)})
	}
	return out
}
