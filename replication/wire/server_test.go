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
			got = append(got, APIRange{k.ApiKey, k.MinVersion, k.MaxVersion})
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

func TestUnsupportedVersionGetsKafkasError(t *testing.T) {
	s, logs := startServer(t, serverOpts{})
	raw := dialRaw(t, s.Addr())

	// An ApiVersions version we do not know: v0 answer, UNSUPPORTED_VERSION,
	// and ApiVersions' own range so the client can retry (KIP-511).
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 99
	av.ClientSoftwareName, av.ClientSoftwareVersion = "raw-test", "1.0"
	resp := raw.recv(t, av, 0, raw.send(t, av)).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != 18 || resp.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("ApiVersions v99 answered %+v", resp)
	}

	// A served API at a version outside its declared range.
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Version = 2
	qr := raw.recv(t, dq, 2, raw.send(t, dq)).(*kmsg.DescribeQuorumResponse)
	if qr.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("DescribeQuorum v2 error %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(qr.ErrorCode))
	}

	// An API the server does not serve at all.
	fs := kmsg.NewPtrAddRaftVoterRequest()
	fs.Version = 0
	ar := raw.recv(t, fs, 0, raw.send(t, fs)).(*kmsg.AddRaftVoterResponse)
	if ar.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("AddRaftVoter error %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(ar.ErrorCode))
	}

	// The connection still serves after the errors.
	dq.Version = 1
	if qr := raw.recv(t, dq, 1, raw.send(t, dq)).(*kmsg.DescribeQuorumResponse); qr.ErrorCode != 0 || qr.Topics[0].Partitions[0].HighWatermark != 42 {
		t.Fatalf("DescribeQuorum v1 after errors: %+v", qr)
	}

	// Produce has no top-level error code to carry UNSUPPORTED_VERSION:
	// only this connection closes.
	raw.send(t, kmsg.NewPtrProduceRequest())
	raw.expectClosed(t)
	wantLog(t, logs, "closing connection", "peer="+raw.LocalAddr().String(), "Produce v0", "UNSUPPORTED_VERSION")
	other := dialRaw(t, s.Addr())
	if qr := other.recv(t, dq, 1, other.send(t, dq)).(*kmsg.DescribeQuorumResponse); qr.ErrorCode != 0 {
		t.Fatalf("other connection: %v", kerr.ErrorForCode(qr.ErrorCode))
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
