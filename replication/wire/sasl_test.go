package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const testSecret = "0123456789abcdef0123456789abcdef"

// membersOnlyAPIs are quorumAPIs with the raft RPCs for members only, as
// a controller serves them; DescribeQuorum stays open to anyone.
func membersOnlyAPIs() []APIRange {
	apis := slices.Clone(quorumAPIs)
	for i := range apis {
		apis[i].MembersOnly = apis[i].Key != kmsg.DescribeQuorum.Int16()
	}
	return apis
}

// seen records what the handler was handed.
type seen struct {
	mu   sync.Mutex
	reqs []*Request
}

func (s *seen) handler() Handler {
	return HandlerFunc(func(req *Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		echo(req)
	})
}

func (s *seen) all() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func fetchRequest(version int16, replicaID int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.SessionID = version, replicaID, 7
	req.ReplicaState.ID = replicaID
	t := kmsg.NewFetchRequestTopic()
	t.Topic = "__cluster_metadata"
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset = 0, 160
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func TestMemberAuthenticatesAndIsServed(t *testing.T) {
	counters := NewCounters()
	var h seen
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), handler: h.handler(), counters: counters})
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), Counters: counters, SASL: MemberMechanism(testSecret)})
	checkVote(t, do(t, c, voteRequest(3, false)), 3, false)
	checkVote(t, do(t, c, voteRequest(4, true)), 4, true) // same connection, no new exchange

	reqs := h.all()
	if len(reqs) != 2 || !reqs[0].Member || reqs[0].Principal != MemberPrincipal || reqs[0].ConnID != reqs[1].ConnID {
		t.Fatalf("handler saw %d requests, first Member=%v Principal=%q", len(reqs), reqs[0].Member, reqs[0].Principal)
	}
	tr := counters.Snapshot()
	sent := tr.Nodes[2].RequestsSent
	if sent[17].Messages != 1 || sent[36].Messages != 2 || sent[52].Messages != 2 {
		t.Errorf("node 2 sent SaslHandshake %d, SaslAuthenticate %d, Vote %d; want 1, 2, 2", sent[17].Messages, sent[36].Messages, sent[52].Messages)
	}
	if got := tr.Links[LinkID{2, 1}].Requests[36].Messages; got != 2 {
		t.Errorf("link 2→1 carried %d SaslAuthenticate, want 2", got)
	}
	if n := tr.Nodes[1]; n.Authenticated != 1 || n.AuthFailures != 0 || n.Unauthorized.Total().Messages != 0 {
		t.Errorf("server counters: %+v", n)
	}
}

// TestForgedFetchIsRefused is the security review's attack: a stranger's
// Fetch claiming a follower's replica id must not reach raft.
func TestForgedFetchIsRefused(t *testing.T) {
	counters := NewCounters()
	var h seen
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), handler: h.handler(), counters: counters})
	for _, version := range []int16{12, 17} {
		r := dialRaw(t, s.Addr())
		req := fetchRequest(version, 2)
		resp := r.recv(t, req, version, r.send(t, req)).(*kmsg.FetchResponse)
		if resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code || resp.SessionID != 7 {
			t.Fatalf("Fetch v%d: error %d session %d, want CLUSTER_AUTHORIZATION_FAILED", version, resp.ErrorCode, resp.SessionID)
		}
		switch {
		case version < 13 && (len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code || resp.Topics[0].Partitions[0].HighWatermark != -1):
			t.Fatalf("Fetch v%d: partitions %+v, want the error in each, as Kafka's FetchRequest.getErrorResponse", version, resp.Topics)
		case version >= 13 && len(resp.Topics) != 0:
			t.Fatalf("Fetch v%d: %d topics, want none", version, len(resp.Topics))
		}
		// The connection stays open for what anonymous clients may do.
		dq := kmsg.NewPtrDescribeQuorumRequest()
		dq.Version = 1
		if q := r.recv(t, dq, 1, r.send(t, dq)).(*kmsg.DescribeQuorumResponse); q.ErrorCode != 0 {
			t.Fatalf("DescribeQuorum after a refusal: error %d", q.ErrorCode)
		}
	}
	for _, req := range h.all() {
		if req.Key() != kmsg.DescribeQuorum.Int16() || req.Member || req.Principal != AnonymousPrincipal {
			t.Fatalf("handler was handed %s (member %v, %s)", kmsg.NameForKey(req.Key()), req.Member, req.Principal)
		}
	}
	// Every other raft RPC is refused the same way, with its top-level code.
	c := newClient(t, ClientConfig{From: 9, To: 1, Addr: s.Addr()})
	for _, req := range []kmsg.Request{voteRequest(5, false), kmsg.NewPtrBeginQuorumEpochRequest(), kmsg.NewPtrEndQuorumEpochRequest(), kmsg.NewPtrFetchSnapshotRequest()} {
		resp := do(t, c, req)
		resp2, _ := errorResponse(req, 0)
		if code := codeOf(resp); code != kerr.ClusterAuthorizationFailed.Code {
			t.Errorf("%s: error %d, want CLUSTER_AUTHORIZATION_FAILED (%T)", kmsg.NameForKey(req.Key()), code, resp2)
		}
	}
	if r := counters.Refusals(1); r.Unauthorized != 6 || r.AuthFailures != 0 {
		t.Errorf("Refusals = %+v, want 6 unauthorized", r)
	}
	if got := counters.Snapshot().Nodes[1].Unauthorized[1].Messages; got != 2 {
		t.Errorf("%d Fetch counted unauthorized, want 2", got)
	}
}

func codeOf(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.VoteResponse:
		return r.ErrorCode
	case *kmsg.BeginQuorumEpochResponse:
		return r.ErrorCode
	case *kmsg.EndQuorumEpochResponse:
		return r.ErrorCode
	case *kmsg.FetchSnapshotResponse:
		return r.ErrorCode
	}
	return -2
}

func TestWrongSecretIsRefusedAndClosed(t *testing.T) {
	counters := NewCounters()
	var h seen
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), handler: h.handler(), counters: counters})
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism("not-the-secret-not-the-secret!!")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Do(ctx, voteRequest(3, false))
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong secret: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	// A wrong user too, and the connection is closed after the answer,
	// as Kafka does; kmsg alone speaks here.
	r := dialRaw(t, s.Addr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MemberMechanismName
	if resp := r.recv(t, hs, 1, r.send(t, hs)).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 || !slices.Equal(resp.SupportedMechanisms, []string{MemberMechanismName}) {
		t.Fatalf("SaslHandshake: %+v", resp)
	}
	_, first, err := scram.Auth{User: "admin", Pass: testSecret}.AsSha256Mechanism().Authenticate(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 2, first
	resp := r.recv(t, au, 2, r.send(t, au)).(*kmsg.SASLAuthenticateResponse)
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != authFailedMessage {
		t.Fatalf("unknown user: %+v", resp)
	}
	r.expectClosed(t)
	if got := counters.Refusals(1).AuthFailures; got != 2 {
		t.Errorf("AuthFailures = %d, want 2", got)
	}
	if len(h.all()) != 0 {
		t.Fatal("the handler saw a request")
	}
}

func TestSASLOutOfOrderAndUnknownMechanism(t *testing.T) {
	counters := NewCounters()
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), counters: counters})

	// An anonymous connection cannot authenticate later (ILLEGAL_SASL_STATE,
	// KafkaApis' answer once a connection is past authentication) and
	// stays open.
	r := dialRaw(t, s.Addr())
	dq := kmsg.NewPtrDescribeQuorumRequest()
	r.recv(t, dq, 0, r.send(t, dq))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MemberMechanismName
	if resp := r.recv(t, hs, 1, r.send(t, hs)).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("late SaslHandshake: error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	if resp := r.recv(t, au, 1, r.send(t, au)).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslAuthenticate without handshake: error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	r.recv(t, dq, 0, r.send(t, dq))

	// An unknown mechanism: UNSUPPORTED_SASL_MECHANISM, then closed.
	r = dialRaw(t, s.Addr())
	hs.Mechanism = "PLAIN"
	if resp := r.recv(t, hs, 1, r.send(t, hs)).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(resp.SupportedMechanisms, []string{MemberMechanismName}) {
		t.Fatalf("PLAIN: %+v", resp)
	}
	r.expectClosed(t)

	// Another request in the middle of the exchange: closed.
	r = dialRaw(t, s.Addr())
	hs.Mechanism = MemberMechanismName
	r.recv(t, hs, 1, r.send(t, hs))
	v := voteRequest(1, false)
	if resp := r.recv(t, v, 2, r.send(t, v)).(*kmsg.VoteResponse); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("Vote during the exchange: error %d, want ILLEGAL_SASL_STATE", resp.ErrorCode)
	}
	r.expectClosed(t)
	if got := counters.Refusals(1).AuthFailures; got != 4 {
		t.Errorf("AuthFailures = %d, want 4", got)
	}
}

// TestSASLThroughLinks: the exchange is traffic like any other, so a
// down link fails it and a healed one lets it through.
func TestSASLThroughLinks(t *testing.T) {
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs()})
	links := NewLinks(1)
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), Links: links, SASL: MemberMechanism(testSecret), DialTimeout: 2 * time.Second})
	links.Set(LinkID{2, 1}, LinkState{Down: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Do(ctx, voteRequest(1, false)); !errors.Is(err, ErrLinkDown) {
		t.Fatalf("down link: %v", err)
	}
	links.HealAll()
	// Responses lost on the way back: the exchange times out within the
	// dial timeout.
	links.Set(LinkID{1, 2}, LinkState{Loss: 1})
	if _, err := c.Do(ctx, voteRequest(1, false)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lossy link: %v", err)
	}
	links.HealAll()
	links.Set(LinkID{2, 1}, LinkState{Delay: 20 * time.Millisecond})
	checkVote(t, do(t, c, voteRequest(2, false)), 2, false)
}

// TestFranzGoWithAndWithoutSASL: kgo, anonymous, still gets ApiVersions
// (which lists the SASL APIs) and DescribeQuorum; kgo with SCRAM-SHA-256
// and the secret authenticates against our server and is a member, and
// with PLAIN it is refused.
func TestFranzGoWithAndWithoutSASL(t *testing.T) {
	var h seen
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), handler: h.handler()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	anon, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.RetryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	resp, err := anon.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	var keys []int16
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		keys = append(keys, k.ApiKey)
	}
	if !slices.Contains(keys, 17) || !slices.Contains(keys, 36) {
		t.Fatalf("ApiVersions lists %v, want SaslHandshake and SaslAuthenticate", keys)
	}
	dq, err := anon.SeedBrokers()[0].Request(ctx, kmsg.NewPtrDescribeQuorumRequest())
	if err != nil || dq.(*kmsg.DescribeQuorumResponse).ErrorCode != 0 {
		t.Fatalf("anonymous DescribeQuorum: %v %+v", err, dq)
	}
	vr, err := anon.SeedBrokers()[0].Request(ctx, voteRequest(3, false))
	if err != nil || vr.(*kmsg.VoteResponse).ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("anonymous Vote: %v %+v", err, vr)
	}

	member, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.RetryTimeout(5*time.Second),
		kgo.SASL(scram.Auth{User: MemberUser, Pass: testSecret}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	vr, err = member.SeedBrokers()[0].Request(ctx, voteRequest(3, false))
	if err != nil {
		t.Fatal(err)
	}
	checkVote(t, vr, 3, false)

	bad, err := kgo.NewClient(kgo.SeedBrokers(s.Addr()), kgo.RetryTimeout(time.Second),
		kgo.SASL(plain.Auth{User: MemberUser, Pass: testSecret}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.SeedBrokers()[0].Request(ctx, kmsg.NewPtrDescribeQuorumRequest()); !errors.Is(err, kerr.UnsupportedSaslMechanism) {
		t.Fatalf("kgo with PLAIN: %v, want UNSUPPORTED_SASL_MECHANISM", err)
	}
	reqs := h.all()
	var members int
	for _, r := range reqs {
		if r.Member {
			members++
			if r.Key() != kmsg.Vote.Int16() {
				t.Errorf("member request %s", kmsg.NameForKey(r.Key()))
			}
		}
	}
	if members != 1 {
		t.Errorf("%d member requests, want 1", members)
	}
}

func TestNoSecretEveryoneIsMember(t *testing.T) {
	var h seen
	s, _ := startServer(t, serverOpts{nodeID: 1, apis: membersOnlyAPIs(), handler: h.handler()})
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr()})
	checkVote(t, do(t, c, voteRequest(3, false)), 3, false)
	if r := h.all(); len(r) != 1 || !r[0].Member {
		t.Fatal("without a secret the request should be a member's")
	}
}

func TestMembersOnlyNeedsAnErrorCode(t *testing.T) {
	// Produce's response has no top-level error code.
	_, err := Listen(ServerConfig{APIs: []APIRange{{Key: 0, MinVersion: 3, MaxVersion: 9, MembersOnly: true}}, Handler: HandlerFunc(echo), Secret: testSecret})
	if err == nil {
		t.Fatal("Listen accepted a members-only Produce")
	}
	if _, err := Listen(ServerConfig{APIs: []APIRange{{Key: 17, MinVersion: 1, MaxVersion: 1}}, Handler: HandlerFunc(echo)}); err == nil {
		t.Fatal("Listen accepted a declared SaslHandshake")
	}
}

// saslFirst starts a SCRAM login on raw with client-first message msg and
// returns the SaslAuthenticate answer.
func saslFirst(t *testing.T, raw *rawConn, msg string) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MemberMechanismName
	if resp := raw.recv(t, hs, 1, raw.send(t, hs)).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: %+v", resp)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 1, []byte(msg)
	return raw.recv(t, au, 1, raw.send(t, au)).(*kmsg.SASLAuthenticateResponse)
}

// A client nonce or a SCRAM message larger than any real client's is
// refused: the server would keep the nonce twice and send it back.
func TestScramBoundsNonceAndMessages(t *testing.T) {
	counters := NewCounters()
	s, logs := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), counters: counters, failDelay: -1})
	long := "n,,n=" + MemberUser + ",r=nonce," + strings.Repeat("x", maxScramMessage)
	for _, tc := range []struct{ msg, log string }{
		{"n,,n=" + MemberUser + ",r=" + strings.Repeat("n", maxScramNonce+1), fmt.Sprintf("client nonce of %d bytes", maxScramNonce+1)},
		{long, fmt.Sprintf("client message of %d bytes", len(long))},
	} {
		raw := dialRaw(t, s.Addr())
		if resp := saslFirst(t, raw, tc.msg); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("%.40s…: %+v", tc.msg, resp)
		}
		raw.expectClosed(t)
		wantLog(t, logs, "refused authentication", tc.log)
	}
	// A real client's nonce still goes through.
	raw := dialRaw(t, s.Addr())
	if resp := saslFirst(t, raw, "n,,n="+MemberUser+",r="+strings.Repeat("n", maxScramNonce)); resp.ErrorCode != 0 {
		t.Fatalf("a %d-byte nonce: %+v", maxScramNonce, resp)
	}
}

// A login that is started and not finished ends at the deadline.
func TestAuthenticationTimeout(t *testing.T) {
	counters := NewCounters()
	s, logs := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), counters: counters, authTimeout: 200 * time.Millisecond})
	raw := dialRaw(t, s.Addr())
	if resp := saslFirst(t, raw, "n,,n="+MemberUser+",r=nonce"); resp.ErrorCode != 0 {
		t.Fatalf("client-first: %+v", resp)
	}
	start := time.Now()
	raw.expectClosed(t)
	wantLog(t, logs, "not authenticated in time")
	if got := counters.Refusals(1).AuthFailures; got != 1 {
		t.Errorf("AuthFailures = %d, want 1", got)
	}
	t.Logf("closed %v after the client-first answer", time.Since(start).Round(time.Millisecond))
	// An anonymous connection has no deadline.
	anon := dialRaw(t, s.Addr())
	dq := kmsg.NewPtrDescribeQuorumRequest()
	anon.recv(t, dq, 0, anon.send(t, dq))
	time.Sleep(400 * time.Millisecond) // twice the login deadline
	anon.recv(t, dq, 0, anon.send(t, dq))
}

// A SASL frame over sasl.server.max.receive.size closes the connection
// unread, as Kafka's InvalidReceiveException does.
func TestSaslMaxReceiveSize(t *testing.T) {
	s, logs := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), saslMax: 1 << 10})
	raw := dialRaw(t, s.Addr())
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 1, make([]byte, 2<<10)
	raw.send(t, au)
	raw.expectClosed(t)
	wantLog(t, logs, "more than sasl.server.max.receive.size 1024")
}

// A failed login is answered after connection.failed.authentication.delay.ms,
// then closed, as Kafka's delayed close: one guess per connection and
// per delay. SaslAuthenticate before any handshake fails the same way.
func TestFailedAuthenticationIsDelayed(t *testing.T) {
	const delay = 150 * time.Millisecond
	counters := NewCounters()
	s, _ := startServer(t, serverOpts{nodeID: 1, secret: testSecret, apis: membersOnlyAPIs(), counters: counters, failDelay: delay})
	c := newClient(t, ClientConfig{From: 2, To: 1, Addr: s.Addr(), SASL: MemberMechanism("not-the-secret-not-the-secret!!")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := c.Do(ctx, voteRequest(3, false)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong secret: %v", err)
	}
	if d := time.Since(start); d < delay {
		t.Errorf("a wrong secret was refused after %v, before the %v delay", d, delay)
	}
	raw := dialRaw(t, s.Addr())
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	start = time.Now()
	if resp := raw.recv(t, au, 1, raw.send(t, au)).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslAuthenticate without a handshake: %+v", resp)
	}
	if d := time.Since(start); d < delay {
		t.Errorf("SaslAuthenticate without a handshake was refused after %v, before the %v delay", d, delay)
	}
	raw.expectClosed(t)
	if got := counters.Refusals(1).AuthFailures; got != 2 {
		t.Errorf("AuthFailures = %d, want 2", got)
	}
}

// Refusals are counted one by one but logged at a bounded rate, with a
// summary of what was left out.
func TestRefusalsAreLoggedAtABoundedRate(t *testing.T) {
	logs := &logBuffer{}
	counters := NewCounters()
	s, err := Listen(ServerConfig{NodeID: 1, APIs: membersOnlyAPIs(), Handler: HandlerFunc(echo), Secret: testSecret,
		Counters: counters, FailedAuthenticationDelay: -1,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	const refusals = 200
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	for range refusals {
		raw := dialRaw(t, s.Addr())
		raw.recv(t, au, 1, raw.send(t, au))
		raw.expectClosed(t)
	}
	if got := counters.Refusals(1).AuthFailures; got != refusals {
		t.Errorf("AuthFailures = %d, want %d", got, refusals)
	}
	s.Close()
	out := logs.String()
	if n := strings.Count(out, "refused authentication"); n != peerLogBurst+1 {
		t.Errorf("%d lines name the refusal, want %d and a summary:\n%s", n, peerLogBurst, out)
	}
	if !strings.Contains(out, "log lines about peers suppressed") || !strings.Contains(out, fmt.Sprintf("count=%d", refusals-peerLogBurst)) {
		t.Errorf("no summary of the %d suppressed lines:\n%s", refusals-peerLogBurst, out)
	}
}
