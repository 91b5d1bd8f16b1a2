package interop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/condition"
	"github.com/kraftlab/kraftlab/cluster/control"
)

// peerCluster is one system the peer comparison measures, kraftlab's
// playground or Apache Kafka, seen only through what both offer: broker
// and controller listeners, process IDs, and killing and starting a node.
// Everything measured goes through the same Kafka-protocol client code.
type peerCluster interface {
	brokers() []string
	controllers() map[int32]string
	// pids are the processes whose CPU the comparison charges.
	pids() []int
	kill(ctx context.Context, id int32) error
	start(ctx context.Context, id int32) error
	stop(ctx context.Context) error
}

// kraftlabPeer is a `kraftlab up --headless` playground: every node in
// the one process.
type kraftlabPeer struct {
	p   *Playground
	ctl *control.Client
}

func startKraftlabPeer(ctx context.Context, bin, dir string, controllers, brokers int, set []string) (*kraftlabPeer, error) {
	args := []string{"--controllers", fmt.Sprint(controllers), "--brokers", fmt.Sprint(brokers), "--profile", string(cluster.ProfileKafka)}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	p, err := StartPlayground(ctx, bin, filepath.Join(dir, "home"), filepath.Join(dir, "data"), args...)
	if err != nil {
		return nil, err
	}
	s, err := control.NewSession(p.Home, p.Session)
	if err != nil {
		p.Down(ctx)
		return nil, err
	}
	return &kraftlabPeer{p: p, ctl: control.NewClient(s)}, nil
}

func (k *kraftlabPeer) brokers() []string             { return k.p.Brokers }
func (k *kraftlabPeer) controllers() map[int32]string { return k.p.Controllers }
func (k *kraftlabPeer) pids() []int                   { return []int{k.p.cmd.Process.Pid} }

func (k *kraftlabPeer) kill(ctx context.Context, id int32) error {
	_, err := k.ctl.Do(ctx, cluster.Action{Kind: cluster.ActKill, Node: condition.NodeID(id)})
	return err
}

func (k *kraftlabPeer) start(ctx context.Context, id int32) error {
	_, err := k.ctl.Do(ctx, cluster.Action{Kind: cluster.ActStart, Node: condition.NodeID(id)})
	return err
}

func (k *kraftlabPeer) stop(ctx context.Context) error {
	k.ctl.Close()
	return k.p.Down(ctx)
}

// kafkaPeer is an Apache Kafka cluster, one JVM per node.
type kafkaPeer struct{ c *KafkaCluster }

func (k kafkaPeer) brokers() []string             { return k.c.BrokerAddrs() }
func (k kafkaPeer) controllers() map[int32]string { return k.c.ControllerAddrs() }
func (k kafkaPeer) pids() []int                   { return k.c.PIDs() }

func (k kafkaPeer) kill(_ context.Context, id int32) error {
	n := k.c.Node(id)
	if n == nil {
		return fmt.Errorf("no kafka node %d", id)
	}
	return n.Kill()
}

func (k kafkaPeer) start(_ context.Context, id int32) error {
	n := k.c.Node(id)
	if n == nil {
		return fmt.Errorf("no kafka node %d", id)
	}
	return n.Start()
}

func (k kafkaPeer) stop(context.Context) error { k.c.Close(); return nil }

// pinned is a franz-go client that sends every request to the one node
// it was given, bypassing franz-go's routing: the comparison asks each
// node itself.
type pinned struct {
	cl   *kgo.Client
	addr string
}

func newPinned(addr string) (*pinned, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("kraftlab-peer-bench"),
		kgo.DialTimeout(2*time.Second), kgo.RequestTimeoutOverhead(2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("client of %s: %w", addr, err)
	}
	return &pinned{cl: cl, addr: addr}, nil
}

func (p *pinned) request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return p.cl.SeedBrokers()[0].Request(ctx, req)
}

func (p *pinned) close() { p.cl.Close() }

// pinnedAll opens a pinned client per address.
func pinnedAll(addrs []string) ([]*pinned, error) {
	var out []*pinned
	for _, a := range addrs {
		p, err := newPinned(a)
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func closeAll(ps []*pinned) {
	for _, p := range ps {
		p.close()
	}
}

// errNoQuorumPartition is a DescribeQuorum answer without the metadata
// partition.
var errNoQuorumPartition = errors.New("DescribeQuorum: no __cluster_metadata-0 in the answer")

// quorumPartition asks the controller at p for the metadata quorum
// (DescribeQuorum) and returns its __cluster_metadata-0 answer, its error
// codes as errors.
func quorumPartition(ctx context.Context, p *pinned) (kmsg.DescribeQuorumResponseTopicPartition, error) {
	var none kmsg.DescribeQuorumResponseTopicPartition
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{t}
	r, err := p.request(ctx, req)
	if err != nil {
		return none, err
	}
	resp := r.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return none, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return none, errNoQuorumPartition
	}
	part := resp.Topics[0].Partitions[0]
	return part, kerr.ErrorForCode(part.ErrorCode)
}

// quorumLeader asks the controller at p for the metadata quorum's leader;
// -1 when it knows none.
func quorumLeader(ctx context.Context, p *pinned) (int32, error) {
	part, err := quorumPartition(ctx, p)
	if err != nil {
		return -1, err
	}
	return part.LeaderID, nil
}

// quorumCaughtUp reports whether the controller at p leads and every
// voter's log end has reached the leader's high watermark.
func quorumCaughtUp(ctx context.Context, p *pinned, voters int) (bool, error) {
	part, err := quorumPartition(ctx, p)
	if err != nil {
		var ke *kerr.Error
		if errors.As(err, &ke) || errors.Is(err, errNoQuorumPartition) {
			return false, nil // not the leader (yet): ask again
		}
		return false, err
	}
	if len(part.CurrentVoters) != voters {
		return false, nil
	}
	for _, v := range part.CurrentVoters {
		if v.LogEndOffset < part.HighWatermark {
			return false, nil
		}
	}
	return true, nil
}

// errNotController is CreateTopics answered by a controller that is not
// the active one.
var errNotController = errors.New("not the active controller")

// createTopic sends CreateTopics for one topic to the node at p (a
// controller) and returns once it answers; NOT_CONTROLLER comes back as
// errNotController.
func createTopic(ctx context.Context, p *pinned, topic string, partitions int32, rf int16) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, partitions, rf
	req.Topics = []kmsg.CreateTopicsRequestTopic{t}
	r, err := p.request(ctx, req)
	if err != nil {
		return err
	}
	resp := r.(*kmsg.CreateTopicsResponse)
	if len(resp.Topics) != 1 {
		return fmt.Errorf("CreateTopics %s: %d topics in the answer", topic, len(resp.Topics))
	}
	code := resp.Topics[0].ErrorCode
	if code == kerr.NotController.Code {
		return errNotController
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return fmt.Errorf("CreateTopics %s: %w", topic, err)
	}
	return nil
}

// topicReady asks the broker at p for topic's metadata (never creating
// it) and reports whether it lists every partition with a leader.
func topicReady(ctx context.Context, p *pinned, topic string, partitions int) (bool, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	r, err := p.request(ctx, req)
	if err != nil {
		return false, err
	}
	resp := r.(*kmsg.MetadataResponse)
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic || t.ErrorCode != 0 || len(t.Partitions) != partitions {
			continue
		}
		for _, part := range t.Partitions {
			if part.ErrorCode != 0 || part.Leader < 0 {
				return false, nil
			}
		}
		return true, nil
	}
	return false, nil
}

// liveBrokers asks the broker at p which brokers its Metadata lists: the
// registered, unfenced ones.
func liveBrokers(ctx context.Context, p *pinned) ([]int32, error) {
	r, err := p.request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, b := range r.(*kmsg.MetadataResponse).Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids, nil
}

// pollUntil calls cond every interval until it holds or ctx ends; an
// error from cond is kept as the reason and polling goes on.
func pollUntil(ctx context.Context, what string, interval time.Duration, cond func(context.Context) (bool, error)) error {
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
			}
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(interval):
		}
	}
}
