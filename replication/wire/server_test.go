package wire

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRoundTripKRaftRPCs(t *testing.T) {
	s, _ := startServer(t, serverOpts{nodeID: 2})
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: s.Addr()})

	checkVote(t, do(t, c, voteRequest(5, true)), 5, true)

	// BeginQuorumEpoch v0 is not flexible: request header v1, response header v0.
	begin := kmsg.NewPtrBeginQuorumEpochRequest()
	begin.Version = 0
	bt := kmsg.NewBeginQuorumEpochRequestTopic()
	bt.Topic = "__cluster_metadata"
	bp := kmsg.NewBeginQuorumEpochRequestTopicPartition()
	bp.LeaderID, bp.LeaderEpoch = 3, 9
	bt.Partitions = append(bt.Partitions, bp)
	begin.Topics = append(begin.Topics, bt)
	br := do(t, c, begin).(*kmsg.BeginQuorumEpochResponse)
	if p := br.Topics[0].Partitions[0]; br.Version != 0 || p.LeaderID != 3 || p.LeaderEpoch != 9 {
		t.Fatalf("BeginQuorumEpoch response v%d %+v", br.Version, p)
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 17
	fetch.MaxWaitMillis = 500
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = [16]byte{15: 1} // Kafka's METADATA_TOPIC_ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset, fp.LastFetchedEpoch = 1234, 4
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	fr := do(t, c, fetch).(*kmsg.FetchResponse)
	p := fr.Topics[0].Partitions[0]
	if fr.Topics[0].TopicID != ft.TopicID || p.HighWatermark != 1234 || string(p.RecordBatches) != "records from 1234" {
		t.Fatalf("Fetch response %+v", fr.Topics[0])
	}

	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	qr := do(t, c, dq).(*kmsg.DescribeQuorumResponse)
	if qp := qr.Topics[0].Partitions[0]; qp.LeaderID != 1 || qp.HighWatermark != 42 || len(qp.CurrentVoters) != 3 {
		t.Fatalf("DescribeQuorum response %+v", qp)
	}
}

func TestPipelinedResponsesKeepRequestOrder(t *testing.T) {
	const n = 50
	parked := make(chan *Request, n)
	s, _ := startServer(t, serverOpts{handler: HandlerFunc(func(r *Request) { parked <- r })})
	c := newClient(t, ClientConfig{From: 1, To: 2, Addr: s.Addr()})

	var mu sync.Mutex
	var order []int32
	var wg sync.WaitGroup
	for i := range int32(n) {
		wg.Add(1)
		err := c.Send(context.Background(), voteRequest(i, i%2 == 0), func(resp kmsg.Response, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("vote %d: %v", i, err)
				return
			}
			checkVote(t, resp, i, i%2 == 0)
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Answer every request only once all arrived, last first.
	reqs := make([]*Request, 0, n)
	for range n {
		reqs = append(reqs, <-parked)
	}
	for i := range reqs {
		if reqs[i].ConnID != reqs[0].ConnID {
			t.Fatalf("requests came on connections %d and %d, want one", reqs[0].ConnID, reqs[i].ConnID)
		}
		if reqs[i].ClientID != "kraftlab-node-1" {
			t.Fatalf("client id %q", reqs[i].ClientID)
		}
	}
	for _, r := range slices.Backward(reqs) {
		echo(r)
	}
	wg.Wait()
	for i, got := range order {
		if got != int32(i) {
			t.Fatalf("responses completed in order %v, want request order", order)
		}
	}
}

func TestApiVersionsAnswersDeclaredRanges(t *testing.T) {
	s, _ := startServer(t, serverOpts{})
	want := append(slices.Clone(quorumAPIs), APIRange{Key: 18, MaxVersion: 5})
	slices.SortFunc(want, func(a, b APIRange) int { return int(a.Key - b.Key) })
	for _, version := range []int16{0, 3, 5} {
		raw := dialRaw(t, s.Addr())
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = version
		req.ClientSoftwareName, req.ClientSoftwareVersion = "raw-test", "1.0"
		resp := raw.recv(t, req, version, raw.send(t, req)).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("v%d: error %v", version, kerr.ErrorForCode(resp.ErrorCode))
		}
		var got []APIRange
		for _, k := range resp.ApiKeys {
			got = append(got, APIRange{Key: k.ApiKey, MinVersion: k.MinVersion, MaxVersion: k.MaxVersion})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("v%d: ApiVersions answered %v, want %v", version, got, want)
		}
	}
}

func TestApiVersionsRejectsBadSoftwareName(t *testing.T) {
	s, _ := startServer(t, serverOpts{})
	raw := dialRaw(t, s.Addr())
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "-bad name", "1.0"
	resp := raw.recv(t, req, 3, raw.send(t, req)).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("error %v, want INVALID_REQUEST", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// rawRequest is a request frame with header v1 (v2 when flexible) and an
// empty body, for any API key and version, even ones kmsg cannot encode.
func rawRequest(key, version int16, corr int32) []byte {
	b := be.AppendUint16(make([]byte, 4, 32), uint16(key))
	b = be.AppendUint16(b, uint16(version))
	b = be.AppendUint32(b, uint32(corr))
	b = be.AppendUint16(b, 1)
	b = append(b, 't')
	if req := kmsg.RequestForKey(key); req != nil {
		req.SetVersion(version)
		if req.IsFlexible() {
			b = append(b, 0)
		}
	}
	be.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestUnsupportedVersionsAsKafka sends every kmsg API at every version
// outside what the server serves, over a real socket. Kafka's
// Processor.parseRequestHeader refuses them and the connection closes
// unanswered, except ApiVersions, which any version reaches and which
// answers a version it does not know with v0 UNSUPPORTED_VERSION and its
// own range (RequestContext.parseRequest, ApiVersionsRequest.getErrorResponse).
func TestUnsupportedVersionsAsKafka(t *testing.T) {
	apis := []APIRange{
		{Key: 1, MinVersion: 7, MaxVersion: 17}, // Fetch: v4-v6 refused
		{Key: 3, MinVersion: 0, MaxVersion: 0},  // Metadata: v1-v13 refused
		{Key: 52, MinVersion: 0, MaxVersion: 2},
		{Key: 55, MinVersion: 0, MaxVersion: 1}, // DescribeQuorum v2 refused
	}
	s, logs := startServer(t, serverOpts{apis: apis})
	served := map[int16]APIRange{18: {Key: 18, MaxVersion: new(kmsg.ApiVersionsRequest).MaxVersion()}}
	for _, r := range apis {
		served[r.Key] = r
	}
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 1
	cases := 0
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		for version := int16(0); version <= req.MaxVersion()+1; version++ {
			if r, ok := served[key]; ok && version >= r.MinVersion && version <= r.MaxVersion {
				continue
			}
			cases++
			raw := dialRaw(t, s.Addr())
			if _, err := raw.Write(rawRequest(key, version, 7)); err != nil {
				t.Fatal(err)
			}
			if key != apiVersionsKey {
				raw.expectClosed(t)
				raw.Close()
				continue
			}
			av := kmsg.NewPtrApiVersionsRequest()
			resp := raw.recv(t, av, 0, 7).(*kmsg.ApiVersionsResponse)
			if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MaxVersion != served[18].MaxVersion {
				t.Fatalf("ApiVersions v%d answered %+v", version, resp)
			}
			// The connection still serves.
			if qr := raw.recv(t, dq, 1, raw.send(t, dq)).(*kmsg.DescribeQuorumResponse); qr.ErrorCode != 0 {
				t.Fatalf("after ApiVersions v%d: %v", version, kerr.ErrorForCode(qr.ErrorCode))
			}
			raw.Close()
		}
	}
	if cases < 400 {
		t.Fatalf("only %d cases", cases)
	}
	wantLog(t, logs, "closing connection", "Fetch v4", "not served")
	wantLog(t, logs, "closing connection", "Metadata v12", "not served")
	// The server still serves after all that.
	other := dialRaw(t, s.Addr())
	if qr := other.recv(t, dq, 1, other.send(t, dq)).(*kmsg.DescribeQuorumResponse); qr.ErrorCode != 0 || qr.Topics[0].Partitions[0].HighWatermark != 42 {
		t.Fatalf("after the probes: %+v", qr)
	}
}

func TestBadInputClosesOnlyThatConnection(t *testing.T) {
	vote := voteRequest(1, false)
	validVote := kmsg.NewRequestFormatter().AppendRequest(nil, vote, 1)
	cases := []struct {
		name string
		send []byte
		log  string
	}{
		{"oversize frame", be.AppendUint32(nil, 1<<20+1), "frame too large: 1048577 bytes, max 1048576"},
		{"negative size", be.AppendUint32(nil, 0xffffffff), "invalid frame size -1"},
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: kraftlab\r\n\r\n"), "frame too large"},
		{"short header", []byte{0, 0, 0, 3, 0, 52, 0}, "request header: 3 bytes"},
		{"unknown API key", []byte{0, 0, 0, 10, 0x7f, 0x7f, 0, 0, 0, 0, 0, 1, 0xff, 0xff}, "unknown API key 32639"},
		{"truncated frame", validVote[:len(validVote)-3], "truncated frame"},
		{"bad client id", []byte{0, 0, 0, 10, 0, 52, 0, 2, 0, 0, 0, 1, 0, 9}, "client id: length 9"},
		{"undecodable body", append(be.AppendUint32(nil, 15), 0, 52, 0, 2, 0, 0, 0, 1, 0xff, 0xff, 0, 0x05, 0x01, 0x02, 0x03), "decode Vote v2 request (correlation id 1)"},
	}
	s, logs := startServer(t, serverOpts{maxFrame: 1 << 20})
	good := dialRaw(t, s.Addr())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := dialRaw(t, s.Addr())
			if _, err := bad.Write(tc.send); err != nil {
				t.Fatal(err)
			}
			bad.Conn.(interface{ CloseWrite() error }).CloseWrite()
			bad.expectClosed(t)
			wantLog(t, logs, "level=ERROR", "closing connection", "peer="+bad.LocalAddr().String(), tc.log)
			checkVote(t, good.recv(t, vote, 2, good.send(t, vote)), 1, false)
		})
	}
}

func TestRespondAfterCloseIsHarmless(t *testing.T) {
	parked := make(chan *Request, 1)
	s, _ := startServer(t, serverOpts{handler: HandlerFunc(func(r *Request) { parked <- r })})
	raw := dialRaw(t, s.Addr())
	raw.send(t, voteRequest(1, false))
	r := <-parked
	raw.Close()
	<-r.Closed()
	echo(r)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestListenRejectsBadAPIs(t *testing.T) {
	for _, apis := range [][]APIRange{
		{{Key: 18, MaxVersion: 3}},
		{{Key: 52, MaxVersion: 3}},
		{{Key: 52, MinVersion: 2, MaxVersion: 1}},
		{{Key: 52}, {Key: 52}},
		{{Key: 999}},
	} {
		if s, err := Listen(ServerConfig{APIs: apis, Handler: HandlerFunc(echo)}); err == nil {
			s.Close()
			t.Errorf("Listen accepted APIs %v", apis)
		}
	}
}

func TestServerCloseCutsConnections(t *testing.T) {
	s, _ := startServer(t, serverOpts{handler: HandlerFunc(func(*Request) {})})
	raw := dialRaw(t, s.Addr())
	raw.send(t, voteRequest(1, false))
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	raw.expectClosed(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
}
