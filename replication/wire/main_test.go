package wire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logBuffer collects a component's log lines so tests can check them.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 10*time.Second, what, cond)
}

// The KRaft RPCs the test servers serve, at the versions kmsg knows.
var quorumAPIs = []APIRange{
	{Key: 1, MinVersion: 4, MaxVersion: 17}, // Fetch
	{Key: 52, MinVersion: 0, MaxVersion: 2}, // Vote
	{Key: 53, MinVersion: 0, MaxVersion: 1}, // BeginQuorumEpoch
	{Key: 54, MinVersion: 0, MaxVersion: 1}, // EndQuorumEpoch
	{Key: 55, MinVersion: 0, MaxVersion: 1}, // DescribeQuorum, v2 left out on purpose
	{Key: 59, MinVersion: 0, MaxVersion: 1}, // FetchSnapshot
}

// echo answers the quorum RPCs with responses derived from the request, so
// a test can tell that each response answers its own request.
func echo(req *Request) {
	switch b := req.Body.(type) {
	case *kmsg.VoteRequest:
		resp := kmsg.NewPtrVoteResponse()
		for _, t := range b.Topics {
			rt := kmsg.NewVoteResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewVoteResponseTopicPartition()
				rp.Partition, rp.LeaderID, rp.LeaderEpoch, rp.VoteGranted = p.Partition, p.CandidateID, p.CandidateEpoch, p.PreVote
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		req.Respond(resp)
	case *kmsg.BeginQuorumEpochRequest:
		resp := kmsg.NewPtrBeginQuorumEpochResponse()
		for _, t := range b.Topics {
			rt := kmsg.NewBeginQuorumEpochResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewBeginQuorumEpochResponseTopicPartition()
				rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Partition, p.LeaderID, p.LeaderEpoch
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		req.Respond(resp)
	case *kmsg.DescribeQuorumRequest:
		resp := kmsg.NewPtrDescribeQuorumResponse()
		rt := kmsg.NewDescribeQuorumResponseTopic()
		rt.Topic = "__cluster_metadata"
		rp := kmsg.NewDescribeQuorumResponseTopicPartition()
		rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = 1, 7, 42
		for id := range int32(3) {
			v := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			v.ReplicaID, v.LogEndOffset = id+1, 42
			rp.CurrentVoters = append(rp.CurrentVoters, v)
		}
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		req.Respond(resp)
	case *kmsg.FetchRequest:
		req.Respond(fetchEcho(b))
	default:
		panic(fmt.Sprintf("echo: unexpected %T", b))
	}
}

func fetchEcho(b *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	for _, t := range b.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.HighWatermark = p.Partition, p.FetchOffset
			rp.RecordBatches = fmt.Appendf(nil, "records from %d", p.FetchOffset)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func voteRequest(epoch int32, preVote bool) *kmsg.VoteRequest {
	req := kmsg.NewPtrVoteRequest()
	req.Version = 2
	req.ClusterID = kmsg.StringPtr("kraftlab-test")
	req.VoterID = 2
	t := kmsg.NewVoteRequestTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID, p.PreVote, p.LastOffset, p.LastOffsetEpoch = epoch, 1, preVote, 100, epoch-1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// checkVote checks that resp answers voteRequest(epoch, preVote).
func checkVote(t *testing.T, resp kmsg.Response, epoch int32, preVote bool) {
	t.Helper()
	v, ok := resp.(*kmsg.VoteResponse)
	if !ok {
		t.Fatalf("got %T, want *kmsg.VoteResponse", resp)
	}
	if v.Version != 2 || len(v.Topics) != 1 || len(v.Topics[0].Partitions) != 1 {
		t.Fatalf("vote response v%d with %d topics: %+v", v.Version, len(v.Topics), v)
	}
	p := v.Topics[0].Partitions[0]
	if p.LeaderEpoch != epoch || p.VoteGranted != preVote || p.LeaderID != 1 {
		t.Fatalf("vote response %+v answers the wrong request (want epoch %d, preVote %v)", p, epoch, preVote)
	}
}

type serverOpts struct {
	nodeID   int32
	addr     string
	apis     []APIRange
	handler  Handler
	counters *Counters
	maxFrame int32
	pool     int64
	maxConns int
	maxPerIP int
	secret   string

	idleTimeout, frameTimeout time.Duration
	authTimeout, failDelay    time.Duration
	saslMax                   int32
}

func startServer(t *testing.T, o serverOpts) (*Server, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if o.apis == nil {
		o.apis = quorumAPIs
	}
	if o.handler == nil {
		o.handler = HandlerFunc(echo)
	}
	s, err := Listen(ServerConfig{
		Addr: o.addr, NodeID: o.nodeID, APIs: o.apis, Handler: o.handler,
		Counters: o.counters, MaxFrameSize: o.maxFrame, Logger: logs.logger(),
		QueuedMaxRequestBytes: o.pool, MaxConnections: o.maxConns, MaxConnectionsPerIP: o.maxPerIP,
		IdleTimeout: o.idleTimeout, FrameTimeout: o.frameTimeout, Secret: o.secret,
		AuthenticationTimeout: o.authTimeout, FailedAuthenticationDelay: o.failDelay, SaslMaxReceiveSize: o.saslMax,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, logs
}

func newClient(t *testing.T, cfg ClientConfig) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func do(t *testing.T, c *Client, req kmsg.Request) kmsg.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// rawConn speaks the protocol with nothing but kmsg's own encoding, as a
// client nobody here wrote would.
type rawConn struct {
	net.Conn
	br   *bufio.Reader
	f    *kmsg.RequestFormatter
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{Conn: nc, br: bufio.NewReader(nc), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw-test"))}
}

func (r *rawConn) send(t *testing.T, req kmsg.Request) int32 {
	t.Helper()
	r.corr++
	if _, err := r.Write(r.f.AppendRequest(nil, req, r.corr)); err != nil {
		t.Fatal(err)
	}
	return r.corr
}

// recv reads one response to req at version, header v0 or v1 as Kafka's
// rules say, and checks its correlation id.
func (r *rawConn) recv(t *testing.T, req kmsg.Request, version int16, corr int32) kmsg.Response {
	t.Helper()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(r.br, size[:]); err != nil {
		t.Fatalf("read response size: %v", err)
	}
	frame := make([]byte, be.Uint32(size[:]))
	if _, err := io.ReadFull(r.br, frame); err != nil {
		t.Fatalf("read response: %v", err)
	}
	if got := int32(be.Uint32(frame)); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	body := frame[4:]
	resp := req.ResponseKind()
	resp.SetVersion(version)
	if resp.IsFlexible() && req.Key() != 18 {
		if body[0] != 0 {
			t.Fatalf("response header tagged fields: %x", body[0])
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decode %s v%d: %v", kmsg.NameForKey(req.Key()), version, err)
	}
	return resp
}

// expectClosed checks that the server closes the connection.
func (r *rawConn) expectClosed(t *testing.T) {
	t.Helper()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, r.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("server did not close the connection")
	}
}

func wantLog(t *testing.T, logs *logBuffer, parts ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("log line with %q", parts), func() bool {
		for line := range strings.SplitSeq(logs.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				return true
			}
		}
		return false
	})
}
