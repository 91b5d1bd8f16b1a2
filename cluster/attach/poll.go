package attach

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/cluster/view"
)

// metadataTopic is the metadata log's topic, the one DescribeQuorum
// describes.
const metadataTopic = "__cluster_metadata"

// jmxOnly is what Kafka shows only through JMX, never on the wire.
var jmxOnly = []string{
	"a broker's lifecycle state and broker epoch",
	"a node's applied metadata offset (observers' rows show what they fetched)",
	"replica fetcher threads",
	"ISR shrink and expand rates",
	"a follower's own epoch and high watermark unless it answers DescribeQuorum itself (--bootstrap-controller)",
}

// poller reads the cluster: one franz-go client for the brokers, and one
// for each controller it can reach directly.
type poller struct {
	cfg     Config
	opts    []kgo.Opt
	brokers *kgo.Client

	mu          sync.Mutex
	controllers map[string]*kgo.Client
}

func newPoller(cfg Config) (*poller, error) {
	opts, err := clientOptions(cfg.Properties, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	p := &poller{cfg: cfg, opts: opts, controllers: map[string]*kgo.Client{}}
	if len(cfg.Bootstrap) > 0 {
		p.brokers, err = kgo.NewClient(append(slices.Clone(opts), kgo.SeedBrokers(cfg.Bootstrap...))...)
		if err != nil {
			return nil, fmt.Errorf("bootstrap servers: %w", err)
		}
	}
	return p, nil
}

func (p *poller) close() {
	if p.brokers != nil {
		p.brokers.Close()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.controllers {
		c.Close()
	}
	p.controllers = map[string]*kgo.Client{}
}

// controller is the client that talks to the controller at addr alone.
func (p *poller) controller(addr string) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.controllers[addr]; ok {
		return c, nil
	}
	c, err := kgo.NewClient(append(slices.Clone(p.opts), kgo.SeedBrokers(addr))...)
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", addr, err)
	}
	p.controllers[addr] = c
	return c, nil
}

// seedRequest sends req to the one seed of c, whatever node it is.
func seedRequest(ctx context.Context, c *kgo.Client, req kmsg.Request) (kmsg.Response, error) {
	seeds := c.SeedBrokers()
	if len(seeds) == 0 {
		return nil, errors.New("no seed broker")
	}
	return seeds[0].Request(ctx, req)
}

// reading gathers one poll's findings.
type reading struct {
	v        view.View
	errs     []string
	reached  bool
	quorum   *kmsg.DescribeQuorumResponseTopicPartition
	direct   map[int32]quorumAnswer // controllers asked directly, by id
	ctrlAddr map[int32]string       // controllers' addresses, by id
	brokers  []kmsg.DescribeClusterResponseBroker
	// quorumAddrs are the voters' first listeners in DescribeQuorum
	// (v2, Kafka 3.9+); listeners every controller's address known.
	quorumAddrs, listeners map[int32]string
	answered               map[int32]bool // brokers that answered a probe
}

// quorumAnswer is what one controller said of the quorum when asked
// itself: its leader and epoch, or that it did not answer.
type quorumAnswer struct {
	answered      bool
	leader, epoch int32
	err           error
}

func (r *reading) fail(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// poll reads the cluster once into a view.
func (p *poller) poll(ctx context.Context) (view.View, error) {
	start := p.cfg.now()
	r := &reading{direct: map[int32]quorumAnswer{}, ctrlAddr: map[int32]string{}, answered: map[int32]bool{},
		quorumAddrs: map[int32]string{}, listeners: map[int32]string{}}
	p.readBrokers(ctx, r)
	p.readControllers(ctx, r)
	if r.quorum == nil && p.brokers != nil {
		p.readQuorumThroughBrokers(ctx, r)
	}
	if !r.reached {
		return view.View{}, fmt.Errorf("no node answered (tried %s): %s", p.tried(), strings.Join(r.errs, "; "))
	}
	p.readTopics(ctx, r)
	p.probeBrokers(ctx, r)
	p.probeControllers(ctx, r)
	r.buildNodes()
	v := r.v
	v.Timestamp = p.cfg.now().UnixMilli()
	v.Derive(p.cfg.now(), nil)
	v.Attached = &view.Attached{
		Bootstrap: slices.Clone(p.cfg.Bootstrap), BootstrapController: slices.Clone(p.cfg.BootstrapController),
		PollMs: p.cfg.now().Sub(start).Milliseconds(), Errors: r.errs, Unreachable: slices.Clone(jmxOnly),
	}
	return v, nil
}

func (p *poller) tried() string {
	var s []string
	if len(p.cfg.Bootstrap) > 0 {
		s = append(s, "bootstrap servers "+strings.Join(p.cfg.Bootstrap, ","))
	}
	if len(p.cfg.BootstrapController) > 0 {
		s = append(s, "bootstrap controllers "+strings.Join(p.cfg.BootstrapController, ","))
	}
	return strings.Join(s, " and ")
}

// readBrokers asks the brokers for the cluster's brokers, fenced ones
// included. DescribeCluster's ControllerID from a broker is any live
// controller, not the active one (KIP-919), so it is not used: the
// quorum's leader is.
func (p *poller) readBrokers(ctx context.Context, r *reading) {
	if p.brokers == nil {
		return
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	resp, err := p.brokers.Request(ctx, req)
	if err != nil {
		r.fail("DescribeCluster: %v", err)
		return
	}
	dc := resp.(*kmsg.DescribeClusterResponse)
	if err := kerr.ErrorForCode(dc.ErrorCode); err != nil {
		r.fail("DescribeCluster: %v", err)
		return
	}
	r.reached = true
	r.v.ClusterID = dc.ClusterID
	r.brokers = dc.Brokers
}

// readControllers asks each controller directly, when they can be
// reached: DescribeCluster for their ids and addresses (KIP-919), then
// DescribeQuorum of each, which the leader answers whole and a follower
// with the leader and epoch it knows.
func (p *poller) readControllers(ctx context.Context, r *reading) {
	addrs := map[int32]string{}
	for _, a := range p.cfg.BootstrapController {
		c, err := p.controller(a)
		if err != nil {
			r.fail("%v", err)
			continue
		}
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2 // controllers
		resp, err := seedRequest(ctx, c, req)
		if err != nil {
			r.fail("DescribeCluster at controller %s: %v", a, err)
			continue
		}
		dc := resp.(*kmsg.DescribeClusterResponse)
		if err := kerr.ErrorForCode(dc.ErrorCode); err != nil {
			r.fail("DescribeCluster at controller %s: %v", a, err)
			continue
		}
		r.reached = true
		if r.v.ClusterID == "" {
			r.v.ClusterID = dc.ClusterID
		}
		for _, b := range dc.Brokers {
			addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		}
		break
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for id, a := range addrs {
		r.ctrlAddr[id] = a
		wg.Go(func() {
			q, qr, ans := p.askQuorum(ctx, a)
			mu.Lock()
			defer mu.Unlock()
			r.direct[id] = ans
			if q != nil && r.quorum == nil {
				r.quorum, r.quorumAddrs = q, nodeAddrs(qr)
			}
		})
	}
	wg.Wait()
}

// askQuorum sends DescribeQuorum to the controller at addr alone.
func (p *poller) askQuorum(ctx context.Context, addr string) (*kmsg.DescribeQuorumResponseTopicPartition, *kmsg.DescribeQuorumResponse, quorumAnswer) {
	c, err := p.controller(addr)
	if err != nil {
		return nil, nil, quorumAnswer{leader: -1, epoch: -1, err: err}
	}
	resp, err := seedRequest(ctx, c, describeQuorumRequest())
	if err != nil {
		return nil, nil, quorumAnswer{leader: -1, epoch: -1, err: err}
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	part, err := quorumPartition(dq)
	if err != nil {
		// A follower answers NOT_LEADER_OR_FOLLOWER and nothing else:
		// Kafka's KafkaRaftClient leaves the leader and epoch it knows
		// out of the answer.
		return nil, nil, quorumAnswer{answered: true, leader: -1, epoch: -1, err: err}
	}
	return part, dq, quorumAnswer{answered: true, leader: part.LeaderID, epoch: part.LeaderEpoch}
}

// nodeAddrs are the first listener of each node DescribeQuorum names.
func nodeAddrs(resp *kmsg.DescribeQuorumResponse) map[int32]string {
	out := map[int32]string{}
	for _, n := range resp.Nodes {
		if len(n.Listeners) > 0 {
			out[n.NodeID] = net.JoinHostPort(n.Listeners[0].Host, strconv.Itoa(int(n.Listeners[0].Port)))
		}
	}
	return out
}

func describeQuorumRequest() *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = metadataTopic
	pt := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)
	return req
}

// quorumPartition is the metadata partition of a DescribeQuorum answer,
// with its error; nil if the answer has none.
func quorumPartition(resp *kmsg.DescribeQuorumResponse) (*kmsg.DescribeQuorumResponseTopicPartition, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			pt := &resp.Topics[i].Partitions[j]
			return pt, kerr.ErrorForCode(pt.ErrorCode)
		}
	}
	return nil, errors.New("DescribeQuorum answered no partition")
}

// readQuorumThroughBrokers asks a broker, which forwards DescribeQuorum
// to the active controller, as kafka-metadata-quorum --bootstrap-server
// does.
func (p *poller) readQuorumThroughBrokers(ctx context.Context, r *reading) {
	resp, err := p.brokers.Request(ctx, describeQuorumRequest())
	if err != nil {
		r.fail("DescribeQuorum: %v", err)
		return
	}
	part, err := quorumPartition(resp.(*kmsg.DescribeQuorumResponse))
	if err != nil {
		r.fail("DescribeQuorum: %v", err)
		return
	}
	r.reached = true
	r.quorum, r.quorumAddrs = part, nodeAddrs(resp.(*kmsg.DescribeQuorumResponse))
}

// readTopics reads every topic's partitions from the brokers, with their
// eligible leader replicas where the brokers serve
// DescribeTopicPartitions, and each partition's high watermark.
func (p *poller) readTopics(ctx context.Context, r *reading) {
	if p.brokers == nil {
		return
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // every topic
	resp, err := p.brokers.Request(ctx, req)
	if err != nil {
		r.fail("Metadata: %v", err)
		return
	}
	md := resp.(*kmsg.MetadataResponse)
	topics := map[string]*view.Topic{}
	for _, t := range md.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			r.fail("Metadata of topic %s: %v", *t.Topic, err)
			continue
		}
		vt := view.Topic{Name: *t.Topic, ID: uuidString(t.TopicID)}
		for _, pt := range t.Partitions {
			vt.Partitions = append(vt.Partitions, view.Partition{
				Partition: pt.Partition, Leader: pt.Leader, LeaderEpoch: pt.LeaderEpoch, PartitionEpoch: -1,
				Replicas: orEmpty(pt.Replicas), Isr: orEmpty(pt.ISR), Elr: []int32{}, LastKnownElr: []int32{},
				HighWatermark: -1, ReplicaStates: []view.PartitionReplica{},
			})
		}
		slices.SortFunc(vt.Partitions, func(a, b view.Partition) int { return int(a.Partition - b.Partition) })
		r.v.Topics = append(r.v.Topics, vt)
	}
	for i := range r.v.Topics {
		topics[r.v.Topics[i].Name] = &r.v.Topics[i]
	}
	if len(topics) == 0 {
		return
	}
	p.readELR(ctx, r, topics)
	ends, err := kadm.NewClient(p.brokers).ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...)
	if err != nil {
		r.fail("ListOffsets: %v", err)
		return
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			return
		}
		if t := topics[o.Topic]; t != nil {
			for i := range t.Partitions {
				if t.Partitions[i].Partition == o.Partition {
					t.Partitions[i].HighWatermark = o.Offset
				}
			}
		}
	})
}

// readELR fills the eligible leader replicas (KIP-966) from
// DescribeTopicPartitions, page by page; a broker older than Kafka 3.8
// does not serve it, and the partitions keep none.
func (p *poller) readELR(ctx context.Context, r *reading, topics map[string]*view.Topic) {
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		t := kmsg.NewDescribeTopicPartitionsRequestTopic()
		t.Topic = name
		req.Topics = append(req.Topics, t)
	}
	for pages := 0; pages < 10_000; pages++ {
		resp, err := p.brokers.Request(ctx, req)
		if err != nil {
			if !errors.Is(err, kerr.UnsupportedVersion) {
				r.fail("DescribeTopicPartitions: %v", err)
			}
			return
		}
		dtp := resp.(*kmsg.DescribeTopicPartitionsResponse)
		for _, t := range dtp.Topics {
			if t.Topic == nil || topics[*t.Topic] == nil {
				continue
			}
			vt := topics[*t.Topic]
			for _, pt := range t.Partitions {
				for i := range vt.Partitions {
					if vt.Partitions[i].Partition == pt.Partition {
						vt.Partitions[i].Elr, vt.Partitions[i].LastKnownElr = orEmpty(pt.EligibleLeaderReplicas), orEmpty(pt.LastKnownELR)
					}
				}
			}
		}
		if dtp.NextCursor == nil {
			return
		}
		req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: dtp.NextCursor.Topic, Partition: dtp.NextCursor.Partition}
	}
}

// probeBrokers asks each registered broker for its API versions, the
// cheapest request, to tell a live broker from one that is gone.
func (p *poller) probeBrokers(ctx context.Context, r *reading) {
	if p.brokers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.timeout())
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, b := range r.brokers {
		wg.Go(func() {
			_, err := p.brokers.Broker(int(b.NodeID)).Request(ctx, kmsg.NewPtrApiVersionsRequest())
			mu.Lock()
			defer mu.Unlock()
			r.answered[b.NodeID] = err == nil
		})
	}
	wg.Wait()
}

// probeControllers asks each voter that was not asked directly, at the
// listener DescribeQuorum gave for it, for its API versions: whether it
// answers kraftlab (its listener may also want other credentials).
func (p *poller) probeControllers(ctx context.Context, r *reading) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.timeout())
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for id, addr := range r.quorumAddrs {
		if _, asked := r.direct[id]; asked {
			continue
		}
		wg.Go(func() {
			ans := quorumAnswer{answered: true, leader: -1, epoch: -1}
			c, err := p.controller(addr)
			if err == nil {
				_, err = seedRequest(ctx, c, kmsg.NewPtrApiVersionsRequest())
			}
			if err != nil {
				ans = quorumAnswer{leader: -1, epoch: -1, err: err}
			}
			mu.Lock()
			defer mu.Unlock()
			r.direct[id] = ans
		})
	}
	wg.Wait()
}

// buildNodes turns what was read into the view's nodes: the voters, then
// the brokers, with the quorum leader's table of every replica.
func (r *reading) buildNodes() {
	q := r.quorum
	leader, epoch, hwm := int32(view.NoLeader), int32(view.NoLeader), int64(-1)
	rows := map[int32]kmsg.DescribeQuorumResponseTopicPartitionReplicaState{}
	var voters, observers []int32
	if q != nil {
		for id, addr := range r.quorumAddrs {
			if _, ok := r.ctrlAddr[id]; !ok {
				r.listeners[id] = addr
			}
		}
		leader, epoch, hwm = q.LeaderID, q.LeaderEpoch, q.HighWatermark
		for _, s := range q.CurrentVoters {
			rows[s.ReplicaID], voters = s, append(voters, s.ReplicaID)
		}
		for _, s := range q.Observers {
			rows[s.ReplicaID], observers = s, append(observers, s.ReplicaID)
		}
	}
	for id, addr := range r.ctrlAddr {
		r.listeners[id] = addr
		if !slices.Contains(voters, id) {
			voters = append(voters, id)
		}
	}
	for _, id := range voters {
		n := view.Node{ID: id, Kind: view.KindController, Listener: r.listeners[id], State: view.StateRunning,
			Epoch: -1, LeaderID: view.NoLeader, VotedID: -1, LogEndOffset: -1, HighWatermark: -1, LogStartOffset: -1, FetchDeadlineTimestamp: -1}
		ans, asked := r.direct[id]
		switch {
		case id == leader:
			n.Role, n.Epoch, n.LeaderID, n.HighWatermark = view.RoleLeader, epoch, leader, hwm
			if row, ok := rows[id]; ok {
				n.LogEndOffset = row.LogEndOffset
			}
			for _, rid := range append(slices.Clone(voters), observers...) {
				if row, ok := rows[rid]; ok {
					n.Replicas = append(n.Replicas, view.Replica{NodeID: rid, LogEndOffset: row.LogEndOffset,
						LastFetchTimestamp: row.LastFetchTimestamp, LastCaughtUpTimestamp: row.LastCaughtUpTimestamp})
				}
			}
		case asked && !ans.answered:
			n.State = view.StateUnreachable
		default:
			// A voter that does not lead; only its leader's table
			// speaks of it, and its own epoch is not on the wire.
			n.Role = view.RoleFollower
		}
		r.v.Nodes = append(r.v.Nodes, n)
	}
	for _, b := range r.brokers {
		n := view.Node{ID: b.NodeID, Kind: view.KindBroker, Listener: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))),
			State: view.StateUnreachable, Epoch: -1, LeaderID: view.NoLeader, VotedID: -1, LogEndOffset: -1, HighWatermark: -1,
			LogStartOffset: -1, FetchDeadlineTimestamp: -1,
			Broker: &view.Broker{BrokerEpoch: -1, Registered: true, Fenced: b.IsFenced, LastHeartbeatTimestamp: -1, MetadataLag: -1, Fetchers: []view.FetcherThread{}}}
		if r.answered[b.NodeID] {
			n.State = view.StateRunning
		}
		if row, ok := rows[b.NodeID]; ok {
			// Its row is what the leader saw it fetch; its own log end
			// is not on the wire.
			n.Role = view.RoleObserver
			if hwm >= 0 && row.LogEndOffset >= 0 {
				n.Broker.MetadataLag = max(hwm-row.LogEndOffset, 0)
			}
		}
		r.v.Nodes = append(r.v.Nodes, n)
	}
}

func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// uuidString is a topic id as Kafka prints it: URL-safe base64 without
// padding.
func uuidString(id [16]byte) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// timeout is the request timeout, 5 s unless the config says otherwise.
func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}
