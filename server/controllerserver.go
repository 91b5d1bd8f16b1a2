package server

import (
	"context"
	"fmt"

	"github.com/kraftlab/kraftlab/metadata/controller"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/metadata/loader"
	"github.com/kraftlab/kraftlab/replication/wire"
)

// ControllerServer is what only a controller runs, for one incarnation
// (Kafka's ControllerServer): the quorum controller, which acts while its
// node leads the metadata quorum; DescribeCluster for Kafka's
// --bootstrap-controller tools; Envelope, which carries the requests
// brokers forward; and the connections to the brokers that a recovery
// election asks. The raft client that votes is the node's, shared.
type ControllerServer struct {
	ctl     *controller.QuorumController
	brokers *brokerChannel
}

// newControllerServer makes a controller's parts for a new incarnation
// and registers their APIs, and the raft client's, on mux.
func newControllerServer(s *Server, mux *wire.Mux) (*ControllerServer, error) {
	if err := s.raft.Register(mux); err != nil {
		return nil, err
	}
	if err := s.registerDescribeControllers(mux); err != nil {
		return nil, err
	}
	c := &ControllerServer{brokers: newBrokerChannel(s.memberClientConfig(), s.brokerAddr)}
	st := s.cfg.Settings
	ctl, err := controller.New(controller.Config{
		NodeID:                        s.id,
		ClusterID:                     s.cfg.Raft.Raft.ClusterID,
		Raft:                          s.raft,
		ReplicaLogInfo:                replicaLogInfo(c.brokers),
		SessionTimeout:                st.BrokerSessionTimeout,
		NoOpInterval:                  st.MetadataMaxIdleInterval,
		MaxBrokerPartitions:           int(st.MaxBrokerPartitions),
		UncleanLeaderElection:         st.UncleanLeaderElectionEnable,
		MinInsyncReplicas:             int(st.MinInsyncReplicas),
		EligibleLeaderReplicasVersion: int16(st.EligibleLeaderReplicasVersion),
		UncleanElectionInterval:       st.UncleanLeaderElectionInterval,
		AutoLeaderRebalance:           st.AutoLeaderRebalanceEnable,
		LeaderImbalanceCheckInterval:  st.LeaderImbalanceCheckInterval,
		OnEvent:                       s.cfg.OnControllerEvent,
		Logger:                        s.log,
		Cluster:                       s.cfg.Clock,
	})
	if err != nil {
		c.brokers.close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	c.ctl = ctl
	if err := ctl.Register(mux); err != nil {
		c.close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	// Brokers forward their clients' admin requests in envelopes, as a
	// real Kafka broker that joins the controllers does.
	if err := mux.ServeEnvelopes(); err != nil {
		c.close()
		return nil, fmt.Errorf("node %d: %w", s.id, err)
	}
	s.publishers = append(s.publishers, loader.PublisherFuncs{
		Update: func(_ *image.MetadataDelta, img *image.MetadataImage, _ loader.Manifest) {
			ctl.HandleCommittedImage(img)
		},
		Leader: ctl.HandleLeaderChange,
	})
	return c, nil
}

// QuorumController is the incarnation's quorum controller.
func (c *ControllerServer) QuorumController() *controller.QuorumController { return c.ctl }

func (c *ControllerServer) listening() error               { return nil }
func (c *ControllerServer) shutdown(context.Context) error { return nil }
func (c *ControllerServer) stopped()                       {}
func (c *ControllerServer) kill()                          {}

func (c *ControllerServer) close() {
	// The controller first: its recovery elections' questions to the
	// brokers end before their connections close.
	c.ctl.Close()
	c.brokers.close()
}
