package server

import (
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftlab/kraftlab/internal/kafkahash"
	"github.com/kraftlab/kraftlab/metadata/image"
	"github.com/kraftlab/kraftlab/replication/wire"
	"github.com/kraftlab/kraftlab/server/group"
)

// findCoordinatorVersions are the FindCoordinator versions Kafka 4.4
// serves (v4 on batches keys).
var findCoordinatorVersions = wire.APIRange{Key: kmsg.FindCoordinator.Int16(), MinVersion: 0, MaxVersion: 6}

// The coordinator key types of FindCoordinator.
const (
	keyTypeGroup       int8 = 0
	keyTypeTransaction int8 = 1
)

// coordinatorAnswer is the answer for one key.
type coordinatorAnswer struct {
	code    int16
	message string
	node    int32
	host    string
	port    int32
}

// handleFindCoordinator answers where each group's coordinator is: the
// leader of the group's partition of __consumer_offsets (Kafka's
// KafkaApis.handleFindCoordinatorRequest). Without that topic it asks the
// active controller to make it, as Kafka's auto topic creation does, and
// answers COORDINATOR_NOT_AVAILABLE meanwhile; so it does while the
// partition has no leader.
func (b *BrokerServer) handleFindCoordinator(req *wire.Request) {
	r := req.Body.(*kmsg.FindCoordinatorRequest)
	resp := kmsg.NewPtrFindCoordinatorResponse()
	keys := r.CoordinatorKeys
	if r.Version < 4 {
		keys = []string{r.CoordinatorKey}
	}
	img := b.s.servedImage()
	for _, key := range keys {
		a := b.findCoordinator(img, r.CoordinatorType, key)
		if a.code != 0 {
			a.node, a.host, a.port = -1, "", -1
		}
		if r.Version < 4 {
			resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = a.code, a.node, a.host, a.port
			if a.message != "" {
				resp.ErrorMessage = kmsg.StringPtr(a.message)
			}
			break
		}
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.ErrorCode, c.NodeID, c.Host, c.Port = key, a.code, a.node, a.host, a.port
		if a.message != "" {
			c.ErrorMessage = kmsg.StringPtr(a.message)
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	req.Respond(resp)
}

// findCoordinator answers one key.
func (b *BrokerServer) findCoordinator(img *image.MetadataImage, keyType int8, key string) coordinatorAnswer {
	switch {
	case keyType == keyTypeTransaction:
		return coordinatorAnswer{code: kerr.CoordinatorNotAvailable.Code, message: "kraftlab has no transaction coordinator: transactional producers are not supported"}
	case keyType != keyTypeGroup:
		return coordinatorAnswer{code: kerr.InvalidRequest.Code, message: fmt.Sprintf("unknown coordinator key type %d", keyType)}
	case key == "":
		return coordinatorAnswer{code: kerr.InvalidRequest.Code, message: "empty group id"}
	}
	t := img.Topics().TopicByName(group.OffsetsTopic)
	if t == nil {
		b.createOffsetsTopic()
		return coordinatorAnswer{code: kerr.CoordinatorNotAvailable.Code, message: group.OffsetsTopic + " is being created"}
	}
	p := kafkahash.GroupPartition(key, int32(t.NumPartitions()))
	reg := t.Partition(p)
	if reg == nil || reg.Leader < 0 {
		return coordinatorAnswer{code: kerr.CoordinatorNotAvailable.Code, message: fmt.Sprintf("%s-%d has no leader", group.OffsetsTopic, p)}
	}
	addr, ok := brokerListener(img, reg.Leader)
	host, portStr, err := net.SplitHostPort(addr)
	port, perr := strconv.ParseInt(portStr, 10, 32)
	if !ok || err != nil || perr != nil {
		return coordinatorAnswer{code: kerr.CoordinatorNotAvailable.Code, message: fmt.Sprintf("no listener known for broker %d", reg.Leader)}
	}
	return coordinatorAnswer{node: reg.Leader, host: host, port: int32(port)}
}

// createOffsetsTopic asks the active controller, once at a time, to make
// __consumer_offsets with offsets.topic.num.partitions partitions of
// offsets.topic.replication.factor replicas, compacted as Kafka makes it.
// The controller refuses while fewer brokers are registered than the
// replication factor; the next FindCoordinator asks again.
func (b *BrokerServer) createOffsetsTopic() {
	if !b.creatingOffsets.CompareAndSwap(false, true) {
		return
	}
	st := b.s.cfg.Settings
	n, rf := st.OffsetsTopicNumPartitions, st.OffsetsTopicReplicationFactor
	if n <= 0 {
		n = DefaultOffsetsTopicNumPartitions
	}
	if rf <= 0 {
		rf = DefaultOffsetsTopicReplicationFactor
	}
	r := kmsg.NewPtrCreateTopicsRequest()
	r.Version, r.TimeoutMillis = createTopicsVersions.MaxVersion, 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = group.OffsetsTopic, int32(n), int16(rf)
	c := kmsg.NewCreateTopicsRequestTopicConfig()
	c.Name, c.Value = "cleanup.policy", kmsg.StringPtr("compact")
	t.Configs = []kmsg.CreateTopicsRequestTopicConfig{c}
	r.Topics = []kmsg.CreateTopicsRequestTopic{t}
	if !b.fwd.async(createTopicsVersions.Key, r, func(resp kmsg.Response) {
		defer b.creatingOffsets.Store(false)
		ct, ok := resp.(*kmsg.CreateTopicsResponse)
		if !ok || len(ct.Topics) != 1 {
			return
		}
		if code := ct.Topics[0].ErrorCode; code != 0 && code != kerr.TopicAlreadyExists.Code {
			msg := ""
			if m := ct.Topics[0].ErrorMessage; m != nil {
				msg = *m
			}
			b.s.log.Warn("cannot create "+group.OffsetsTopic, "err", kerr.ErrorForCode(code), "message", msg)
		}
	}) {
		b.creatingOffsets.Store(false)
	}
}
