package kafkazk

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kraftlab/kraftlab/metadata/record"
)

// Endpoint is one listener of a broker, as its registration names it
// ("PLAINTEXT://127.0.0.1:9092").
type Endpoint struct {
	Listener string
	Host     string
	Port     int32
}

// String is the endpoint as the registration writes it.
func (e Endpoint) String() string {
	return e.Listener + "://" + net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

func parseEndpoint(s string) (Endpoint, error) {
	listener, hostport, ok := strings.Cut(s, "://")
	if !ok || listener == "" {
		return Endpoint{}, fmt.Errorf("endpoint %q: want LISTENER://HOST:PORT", s)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: %w", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: bad port", s)
	}
	return Endpoint{Listener: listener, Host: host, Port: int32(p)}, nil
}

// Broker is a broker's registration, /brokers/ids/N.
type Broker struct {
	ID        int32
	Endpoints []Endpoint
	Rack      string
	// Epoch is the broker epoch: the zxid that created the registration
	// (its czxid), new at each session. Read from the znode's stat, not
	// its JSON.
	Epoch int64
	// Timestamp is when the broker registered.
	Timestamp time.Time
}

// Endpoint is the broker's endpoint of listener.
func (b Broker) Endpoint(listener string) (Endpoint, bool) {
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

// brokerVersion is the registration's version Kafka 3.9 writes: 5, with
// the features map.
const brokerVersion = 5

type brokerJSON struct {
	Version     int                    `json:"version"`
	Host        string                 `json:"host,omitempty"`
	Port        int32                  `json:"port"`
	JmxPort     int32                  `json:"jmx_port"`
	Timestamp   string                 `json:"timestamp"`
	Endpoints   []string               `json:"endpoints"`
	ProtocolMap map[string]string      `json:"listener_security_protocol_map"`
	Rack        *string                `json:"rack,omitempty"`
	Features    map[string]featureJSON `json:"features"`
}

type featureJSON struct {
	Min int16 `json:"min_version"`
	Max int16 `json:"max_version"`
}

// EncodeBroker is b's registration JSON. The first endpoint's host and
// port also go in the old host and port fields, as Kafka writes them for
// a PLAINTEXT listener.
func EncodeBroker(b Broker) []byte {
	j := brokerJSON{
		Version: brokerVersion, JmxPort: -1, Port: -1,
		Timestamp:   strconv.FormatInt(b.Timestamp.UnixMilli(), 10),
		ProtocolMap: map[string]string{},
		Features:    map[string]featureJSON{},
	}
	for _, e := range b.Endpoints {
		j.Endpoints = append(j.Endpoints, e.String())
		j.ProtocolMap[e.Listener] = "PLAINTEXT"
		if e.Listener == "PLAINTEXT" && j.Host == "" {
			j.Host, j.Port = e.Host, e.Port
		}
	}
	if b.Rack != "" {
		j.Rack = &b.Rack
	}
	out, _ := json.Marshal(j)
	return out
}

// DecodeBroker reads broker id's registration; epoch is the znode's czxid.
func DecodeBroker(id int32, epoch int64, data []byte) (Broker, error) {
	var j brokerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return Broker{}, fmt.Errorf("%s: %w", BrokerPath(id), err)
	}
	if j.Version < 1 {
		return Broker{}, fmt.Errorf("%s: version %d, want 1 or above", BrokerPath(id), j.Version)
	}
	b := Broker{ID: id, Epoch: epoch, Timestamp: millis(j.Timestamp)}
	if j.Rack != nil {
		b.Rack = *j.Rack
	}
	for _, s := range j.Endpoints {
		e, err := parseEndpoint(s)
		if err != nil {
			return Broker{}, fmt.Errorf("%s: %w", BrokerPath(id), err)
		}
		b.Endpoints = append(b.Endpoints, e)
	}
	if len(b.Endpoints) == 0 && j.Host != "" && j.Port > 0 {
		b.Endpoints = []Endpoint{{Listener: "PLAINTEXT", Host: j.Host, Port: j.Port}}
	}
	return b, nil
}

func millis(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// controllerVersion is /controller's version Kafka 3.9 writes: 2, with
// the KRaft controller epoch of a migration (-1 without one).
const controllerVersion = 2

type controllerJSON struct {
	Version   int    `json:"version"`
	BrokerID  *int32 `json:"brokerid"`
	Timestamp string `json:"timestamp"`
	KRaft     *int32 `json:"kraftControllerEpoch,omitempty"`
}

// EncodeController is /controller's JSON for broker id.
func EncodeController(id int32, at time.Time) []byte {
	none := int32(-1)
	out, _ := json.Marshal(controllerJSON{Version: controllerVersion, BrokerID: &id, Timestamp: strconv.FormatInt(at.UnixMilli(), 10), KRaft: &none})
	return out
}

// DecodeController reads /controller: the active controller's id.
func DecodeController(data []byte) (int32, error) {
	var j controllerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return 0, fmt.Errorf("%s: %w", ControllerPath, err)
	}
	if j.BrokerID == nil || *j.BrokerID < 0 {
		return 0, fmt.Errorf("%s: no broker id", ControllerPath)
	}
	return *j.BrokerID, nil
}

// EncodeControllerEpoch is /controller_epoch's data: the number as text.
func EncodeControllerEpoch(epoch int32) []byte { return []byte(strconv.Itoa(int(epoch))) }

// DecodeControllerEpoch reads /controller_epoch.
func DecodeControllerEpoch(data []byte) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q is not an epoch", ControllerEpochPath, data)
	}
	return int32(n), nil
}

// Assignment is a topic's znode, /brokers/topics/T: its id and the
// replicas of each partition.
type Assignment struct {
	Topic string
	ID    record.Uuid
	// Replicas are each partition's replicas, the preferred leader first.
	Replicas map[int32][]int32
}

// Partitions are the assignment's partition indexes, in order.
func (a Assignment) Partitions() []int32 {
	ps := make([]int32, 0, len(a.Replicas))
	for p := range a.Replicas {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// topicVersion is the assignment's version Kafka 3.9 writes: 3, with the
// adding and removing replicas of a reassignment.
const topicVersion = 3

type topicJSON struct {
	Version  int                `json:"version"`
	TopicID  string             `json:"topic_id,omitempty"`
	Parts    map[string][]int32 `json:"partitions"`
	Adding   map[string][]int32 `json:"adding_replicas"`
	Removing map[string][]int32 `json:"removing_replicas"`
}

// EncodeAssignment is a's JSON.
func EncodeAssignment(a Assignment) []byte {
	j := topicJSON{Version: topicVersion, Parts: map[string][]int32{}, Adding: map[string][]int32{}, Removing: map[string][]int32{}}
	if a.ID != record.ZeroUuid {
		j.TopicID = a.ID.String()
	}
	for p, rs := range a.Replicas {
		j.Parts[strconv.Itoa(int(p))] = rs
	}
	out, _ := json.Marshal(j)
	return out
}

// DecodeAssignment reads topic's znode.
func DecodeAssignment(topic string, data []byte) (Assignment, error) {
	var j topicJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return Assignment{}, fmt.Errorf("%s: %w", TopicPath(topic), err)
	}
	a := Assignment{Topic: topic, Replicas: map[int32][]int32{}}
	if j.TopicID != "" {
		id, err := record.ParseUuid(j.TopicID)
		if err != nil {
			return Assignment{}, fmt.Errorf("%s: topic id: %w", TopicPath(topic), err)
		}
		a.ID = id
	}
	for k, rs := range j.Parts {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil || p < 0 {
			return Assignment{}, fmt.Errorf("%s: %q is not a partition", TopicPath(topic), k)
		}
		if len(rs) == 0 {
			return Assignment{}, fmt.Errorf("%s: partition %d has no replicas", TopicPath(topic), p)
		}
		a.Replicas[int32(p)] = rs
	}
	return a, nil
}

// LeaderAndIsr is one partition's state znode: its leader, leader epoch
// and ISR, and the controller epoch that wrote it. ZkVersion, the
// znode's version, is the partition epoch: every conditional write
// names it, and LeaderAndIsr and AlterPartition carry it.
type LeaderAndIsr struct {
	Leader          int32
	LeaderEpoch     int32
	ISR             []int32
	ControllerEpoch int32
	// Recovering is the leader recovery state after an unclean election.
	Recovering bool
	ZkVersion  int32
}

// partitionStateVersion is the state's version Kafka writes: 1.
const partitionStateVersion = 1

type partitionStateJSON struct {
	Version         int     `json:"version"`
	Leader          *int32  `json:"leader"`
	LeaderEpoch     *int32  `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
	ControllerEpoch int32   `json:"controller_epoch"`
	Recovery        *int8   `json:"leader_recovery_state,omitempty"`
}

// EncodeLeaderAndIsr is s's JSON (its ZkVersion is the znode's, not
// written).
func EncodeLeaderAndIsr(s LeaderAndIsr) []byte {
	j := partitionStateJSON{Version: partitionStateVersion, Leader: &s.Leader, LeaderEpoch: &s.LeaderEpoch, ISR: s.ISR, ControllerEpoch: s.ControllerEpoch}
	if j.ISR == nil {
		j.ISR = []int32{}
	}
	if s.Recovering {
		r := int8(1)
		j.Recovery = &r
	}
	out, _ := json.Marshal(j)
	return out
}

// DecodeLeaderAndIsr reads the state of topic's partition at zkVersion.
func DecodeLeaderAndIsr(topic string, partition int32, zkVersion int32, data []byte) (LeaderAndIsr, error) {
	path := PartitionStatePath(topic, partition)
	var j partitionStateJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return LeaderAndIsr{}, fmt.Errorf("%s: %w", path, err)
	}
	if j.Leader == nil || j.LeaderEpoch == nil || *j.LeaderEpoch < 0 {
		return LeaderAndIsr{}, fmt.Errorf("%s: no leader or leader epoch", path)
	}
	s := LeaderAndIsr{Leader: *j.Leader, LeaderEpoch: *j.LeaderEpoch, ISR: j.ISR, ControllerEpoch: j.ControllerEpoch, ZkVersion: zkVersion}
	if j.Recovery != nil {
		switch *j.Recovery {
		case 0:
		case 1:
			s.Recovering = true
		default:
			return LeaderAndIsr{}, fmt.Errorf("%s: leader recovery state %d", path, *j.Recovery)
		}
	}
	return s, nil
}

// ProducerIDBlock is /latest_producer_id_block: the last block of
// producer ids the controller handed to a broker.
type ProducerIDBlock struct {
	Broker int32
	Start  int64
	End    int64
}

type producerIDBlockJSON struct {
	Version int    `json:"version"`
	Broker  int32  `json:"broker"`
	Start   string `json:"block_start"`
	End     string `json:"block_end"`
}

// EncodeProducerIDBlock is b's JSON; Kafka writes the bounds as text.
func EncodeProducerIDBlock(b ProducerIDBlock) []byte {
	out, _ := json.Marshal(producerIDBlockJSON{Version: 1, Broker: b.Broker, Start: strconv.FormatInt(b.Start, 10), End: strconv.FormatInt(b.End, 10)})
	return out
}

// DecodeProducerIDBlock reads /latest_producer_id_block.
func DecodeProducerIDBlock(data []byte) (ProducerIDBlock, error) {
	var j producerIDBlockJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return ProducerIDBlock{}, fmt.Errorf("%s: %w", ProducerIDBlockPath, err)
	}
	start, err1 := strconv.ParseInt(j.Start, 10, 64)
	end, err2 := strconv.ParseInt(j.End, 10, 64)
	if err := errors.Join(err1, err2); err != nil || start < 0 || end < start {
		return ProducerIDBlock{}, fmt.Errorf("%s: bad block [%s, %s]", ProducerIDBlockPath, j.Start, j.End)
	}
	return ProducerIDBlock{Broker: j.Broker, Start: start, End: end}, nil
}

type clusterIDJSON struct {
	Version string `json:"version"`
	ID      string `json:"id"`
}

// EncodeClusterID is /cluster/id's JSON.
func EncodeClusterID(id string) []byte {
	out, _ := json.Marshal(clusterIDJSON{Version: "1", ID: id})
	return out
}

// DecodeClusterID reads /cluster/id.
func DecodeClusterID(data []byte) (string, error) {
	var j clusterIDJSON
	if err := json.Unmarshal(data, &j); err != nil || j.ID == "" {
		return "", fmt.Errorf("%s: no cluster id in %q", ClusterIDPath, data)
	}
	return j.ID, nil
}

// sortedIDs parses and sorts the children of /brokers/ids, skipping none:
// a child that is not a broker id is an error.
func sortedIDs(names []string) ([]int32, error) {
	ids := make([]int32, 0, len(names))
	for _, n := range names {
		id, err := parseID(n)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}
