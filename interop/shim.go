package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's admin client learns the cluster before it sends anything else:
// from a broker with Metadata (API 3), from a controller with
// DescribeCluster (API 60). kraftlab's brokers serve both, its controllers
// neither, so Kafka's kafka-metadata-quorum --bootstrap-controller and
// kafka-broker-api-versions against a controller stop there. A Front
// stands in front of kraftlab's nodes, one listener per node, and answers
// just those two requests (advertising them in the node's own ApiVersions
// answer, which it otherwise passes on unchanged); every other request goes
// to the node byte for byte and its answer comes back byte for byte, so the
// DescribeQuorum answers the tools print are kraftlab's own.
//
// The nodes its answers name are the Front's listeners, or with Direct
// kraftlab's own listeners: then only the bootstrap connection goes
// through the Front and the tools' ApiVersions requests to the nodes they
// list reach kraftlab untouched (what kafka-broker-api-versions prints).
type Front struct {
	// Nodes are kraftlab's node IDs and listeners.
	Nodes map[int32]string
	// ClusterID and ControllerID go in the answers; ControllerID should be
	// the quorum's leader, where Kafka's admin client sends DescribeQuorum
	// when it bootstraps from controllers.
	ClusterID    string
	ControllerID int32
	// Direct names kraftlab's listeners instead of the Front's.
	Direct bool

	lns   map[int32]net.Listener
	addrs map[int32]string
	wg    sync.WaitGroup
	mu    sync.Mutex
	seen  []string // "node: ApiName vN" of every request, in order
}

// Listen starts one listener on 127.0.0.1 for each node.
func (f *Front) Listen() error {
	f.lns, f.addrs = map[int32]net.Listener{}, map[int32]string{}
	for id, up := range f.Nodes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.Close()
			return err
		}
		f.lns[id], f.addrs[id] = ln, ln.Addr().String()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				f.wg.Add(1)
				go func() { defer f.wg.Done(); f.serve(c, id, up) }()
			}
		}()
	}
	return nil
}

// Addr is the Front's listener for node id.
func (f *Front) Addr(id int32) string { return f.addrs[id] }

// Close stops the listeners and waits for their connections to end.
func (f *Front) Close() {
	for _, ln := range f.lns {
		ln.Close()
	}
	f.wg.Wait()
}

// Seen lists the requests the Front saw, as "node N: Name vN".
func (f *Front) Seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 64<<20 {
		return nil, fmt.Errorf("frame of %d bytes", size)
	}
	buf := make([]byte, size)
	_, err := io.ReadFull(r, buf)
	return buf, err
}

func writeFrame(w io.Writer, b []byte) error {
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
	if err == nil {
		_, err = w.Write(b)
	}
	return err
}

// requestHeader parses a request header and returns the key, version,
// correlation ID and where the body starts.
func requestHeader(f []byte) (key, version int16, corr int32, body int, err error) {
	if len(f) < 10 {
		return 0, 0, 0, 0, errors.New("short request header")
	}
	key = int16(binary.BigEndian.Uint16(f))
	version = int16(binary.BigEndian.Uint16(f[2:]))
	corr = int32(binary.BigEndian.Uint32(f[4:]))
	n := int(int16(binary.BigEndian.Uint16(f[8:])))
	body = 10 + max(n, 0)
	req := kmsg.RequestForKey(key)
	if req == nil {
		return key, version, corr, 0, fmt.Errorf("unknown API key %d", key)
	}
	req.SetVersion(version)
	if req.IsFlexible() { // request header v2: tagged fields follow the client ID
		if body, err = skipTags(f, body); err != nil {
			return key, version, corr, 0, err
		}
	}
	if body > len(f) {
		return key, version, corr, 0, errors.New("short request header")
	}
	return key, version, corr, body, nil
}

// skipTags returns the position after the tagged fields at pos.
func skipTags(f []byte, pos int) (int, error) {
	uvarint := func() (uint64, error) {
		if pos > len(f) {
			return 0, errors.New("short tagged fields")
		}
		v, n := binary.Uvarint(f[pos:])
		if n <= 0 {
			return 0, errors.New("bad tagged fields")
		}
		pos += n
		return v, nil
	}
	count, err := uvarint()
	for i := uint64(0); err == nil && i < count; i++ {
		var size uint64
		if _, err = uvarint(); err == nil {
			if size, err = uvarint(); err == nil {
				pos += int(size)
			}
		}
	}
	return pos, err
}

func (b *Front) serve(c net.Conn, id int32, upstream string) {
	defer c.Close()
	var up net.Conn
	defer func() {
		if up != nil {
			up.Close()
		}
	}()
	for {
		f, err := readFrame(c)
		if err != nil {
			return
		}
		key, version, corr, body, err := requestHeader(f)
		if err != nil {
			return
		}
		b.mu.Lock()
		b.seen = append(b.seen, fmt.Sprintf("node %d: ", id)+kmsg.NameForKey(key)+" v"+strconv.Itoa(int(version)))
		b.mu.Unlock()
		var resp kmsg.Response
		switch key {
		case 3:
			resp = b.metadata(version)
		case 60:
			req := &kmsg.DescribeClusterRequest{Version: version}
			if err := req.ReadFrom(f[body:]); err != nil {
				return
			}
			resp = b.describeCluster(req)
		}
		if resp != nil {
			out := binary.BigEndian.AppendUint32(nil, uint32(corr))
			if resp.IsFlexible() {
				out = append(out, 0)
			}
			if writeFrame(c, resp.AppendTo(out)) != nil {
				return
			}
			continue
		}
		if up == nil {
			if up, err = net.Dial("tcp", upstream); err != nil {
				return
			}
		}
		if writeFrame(up, f) != nil {
			return
		}
		r, err := readFrame(up)
		if err != nil {
			return
		}
		if key == 18 {
			r = b.advertise(r, version)
		}
		if writeFrame(c, r) != nil {
			return
		}
	}
}

// advertise adds Metadata and DescribeCluster to an ApiVersions answer
// (response header v0: the correlation ID only).
func (b *Front) advertise(r []byte, version int16) []byte {
	if len(r) < 4 {
		return r
	}
	resp := &kmsg.ApiVersionsResponse{Version: version}
	if err := resp.ReadFrom(r[4:]); err != nil || resp.ErrorCode != 0 {
		return r
	}
	have := map[int16]bool{}
	for _, k := range resp.ApiKeys {
		have[k.ApiKey] = true
	}
	for _, k := range []kmsg.Request{&kmsg.MetadataRequest{}, &kmsg.DescribeClusterRequest{}} {
		if !have[k.Key()] {
			resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k.Key(), MinVersion: 0, MaxVersion: k.MaxVersion()})
		}
	}
	return resp.AppendTo(append([]byte(nil), r[:4]...))
}

func (b *Front) hostPorts() (ids []int32, hosts []string, ports []int32) {
	for id, addr := range b.Nodes {
		if !b.Direct {
			addr = b.addrs[id]
		}
		h, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		ids, hosts, ports = append(ids, id), append(hosts, h), append(ports, int32(n))
	}
	return
}

func (b *Front) metadata(version int16) kmsg.Response {
	resp := &kmsg.MetadataResponse{Version: version, ControllerID: b.ControllerID}
	id := b.ClusterID
	resp.ClusterID = &id
	ids, hosts, ports := b.hostPorts()
	for i := range ids {
		resp.Brokers = append(resp.Brokers, kmsg.MetadataResponseBroker{NodeID: ids[i], Host: hosts[i], Port: ports[i]})
	}
	return resp
}

func (b *Front) describeCluster(req *kmsg.DescribeClusterRequest) kmsg.Response {
	resp := &kmsg.DescribeClusterResponse{Version: req.Version, EndpointType: req.EndpointType,
		ClusterID: b.ClusterID, ControllerID: b.ControllerID, ClusterAuthorizedOperations: -2147483648}
	ids, hosts, ports := b.hostPorts()
	for i := range ids {
		resp.Brokers = append(resp.Brokers, kmsg.DescribeClusterResponseBroker{NodeID: ids[i], Host: hosts[i], Port: ports[i]})
	}
	return resp
}

// Request sends one request to the node at addr and returns its answer.
func Request(addr string, req kmsg.Request) (kmsg.Response, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	f := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	f = binary.BigEndian.AppendUint16(f, uint16(req.GetVersion()))
	f = binary.BigEndian.AppendUint32(f, 1)
	f = binary.BigEndian.AppendUint16(f, 7)
	f = append(f, "interop"...)
	if req.IsFlexible() {
		f = append(f, 0) // no tagged fields
	}
	if err := writeFrame(c, req.AppendTo(f)); err != nil {
		return nil, err
	}
	r, err := readFrame(c)
	if err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	body := 4
	if resp.IsFlexible() && req.Key() != 18 { // ApiVersions answers with header v0
		if body, err = skipTags(r, 4); err != nil {
			return nil, err
		}
	}
	if len(r) < body {
		return nil, errors.New("short answer")
	}
	if err := resp.ReadFrom(r[body:]); err != nil {
		return nil, fmt.Errorf("%s answer: %w", kmsg.NameForKey(req.Key()), err)
	}
	return resp, nil
}

// APIVersions asks the node at addr for its API versions (ApiVersions v3)
// and returns key -> [min, max].
func APIVersions(addr string) (map[int16][2]int16, error) {
	r, err := Request(addr, &kmsg.ApiVersionsRequest{Version: 3, ClientSoftwareName: "kraftlab-interop", ClientSoftwareVersion: "1"})
	if err != nil {
		return nil, err
	}
	resp := r.(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("ApiVersions error %d", resp.ErrorCode)
	}
	out := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		out[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	return out, nil
}

// DescribeQuorum asks the node at addr to describe __cluster_metadata-0
// (DescribeQuorum v2).
func DescribeQuorum(addr string) (*kmsg.DescribeQuorumResponse, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 2
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{p}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{t}
	r, err := Request(addr, req)
	if err != nil {
		return nil, err
	}
	return r.(*kmsg.DescribeQuorumResponse), nil
}
