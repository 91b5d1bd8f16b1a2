package interop

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/attach"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// attachRecording is a run of the attached reader as the live screen
// pulls it, in the shape of tui's recordings (tui/golden_test.go), which
// replay it through the screen for its goldens.
type attachRecording struct {
	Source  string        `json:"source"`
	Started time.Time     `json:"started"`
	Select  int32         `json:"select"`
	Frames  []attachFrame `json:"frames"`
}

type attachFrame struct {
	View   view.View       `json:"view"`
	Events []cluster.Event `json:"events"`
}

// TestAttachToKafka reads a real Kafka 4.4 cluster (3 controllers, 2
// brokers) with kraftlab's attach: its quorum, brokers and partitions
// agree with kafka-metadata-quorum and kafka-topics read around the same
// poll; a killed controller shows as a new epoch with an inferred
// election and as unreachable; a killed broker as fenced and
// unreachable. With KRAFTLAB_TUI_RECORD=1 it writes the run to
// tui/testdata/attached.json for the screen's goldens.
func TestAttachToKafka(t *testing.T) {
	k := needKafka(t)
	ctx := context.Background()
	kc, err := StartKafkaCluster(ctx, k, t.TempDir(), KafkaClusterShape{Controllers: 3, Brokers: 2, Extra: sameTimings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range []int32{1, 2, 3, 101, 102} {
				t.Logf("kafka node %d's log:\n%s", id, indent(kc.Nodes[id].Log(20)))
			}
		}
		kc.Close()
	})
	var ctrls []string
	for _, id := range []int32{1, 2, 3} {
		ctrls = append(ctrls, kc.ControllerAddrs()[id])
	}
	cfg := attach.Config{Bootstrap: kc.BrokerAddrs(), BootstrapController: ctrls, Interval: time.Hour, Timeout: 5 * time.Second}
	var c *attach.Cluster
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if c, err = attach.Dial(ctx, cfg); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attach: %v", err)
		}
		time.Sleep(500 * time.Millisecond) // the JVMs are starting
	}
	defer c.Close()
	rec := attachRecording{Source: "Apache Kafka " + KafkaVersion + ", 3 controllers and 2 brokers, read by kraftlab's attach (TestAttachToKafka)", Started: time.Now(), Select: -1}
	var seq uint64
	frame := func(v view.View) {
		var evs []cluster.Event
		for ev := range c.Events(ctx, seq, false) {
			evs = append(evs, ev)
			seq = ev.Seq
		}
		rec.Frames = append(rec.Frames, attachFrame{View: v, Events: evs})
	}
	waitAttached := func(what string, cond func(*view.View) bool) view.View {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			v, err := c.Refresh(ctx)
			if err == nil && cond(&v) {
				frame(v)
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("attached: no %s after 90s (last error %v); last view: leader %d epoch %d, nodes %s", what, err, v.LeaderID, v.LeaderEpoch, nodeStates(&v))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	unfenced := func(v *view.View, ids ...int32) bool {
		for _, id := range ids {
			n, ok := v.Node(id)
			if !ok || n.Broker == nil || n.Broker.Fenced || n.State != view.StateRunning {
				return false
			}
		}
		return true
	}
	waitAttached("leader and unfenced brokers", func(v *view.View) bool { return v.LeaderID > 0 && unfenced(v, 101, 102) })

	boot := kc.BrokerAddrs()[0]
	if r := runTool(t, k, MainTopics, "--bootstrap-server", boot, "--create", "--topic", "attached", "--partitions", "3", "--replication-factor", "2"); r.Err != nil {
		t.Fatalf("kafka-topics --create: %v", r.Err)
	}
	v := waitAttached("topic attached with leaders", func(v *view.View) bool {
		tp, ok := v.Topic("attached")
		if !ok || len(tp.Partitions) != 3 {
			return false
		}
		for _, p := range tp.Partitions {
			if p.Leader < 0 || len(p.Isr) != 2 || p.HighWatermark < 0 {
				return false
			}
		}
		return true
	})
	if !slices.ContainsFunc(rec.Frames[len(rec.Frames)-1].Events, func(ev cluster.Event) bool {
		return ev.Kind == cluster.EventTopicCreated && ev.Inferred && strings.Contains(ev.Message, "attached")
	}) {
		t.Errorf("no inferred topic-created event for attached in %+v", rec.Frames[len(rec.Frames)-1].Events)
	}

	// The same figures as Kafka's tools, read around one poll.
	compareQuorum(t, k, c, boot)
	compareTopics(t, k, c, boot)

	// A killed active controller: a new epoch, seen.
	old, oldEpoch := v.LeaderID, v.LeaderEpoch
	if err := kc.Kill(old); err != nil {
		t.Fatal(err)
	}
	v = waitAttached("new leader", func(v *view.View) bool { return v.LeaderID > 0 && v.LeaderID != old && v.LeaderEpoch > oldEpoch })
	if n, _ := v.Node(old); n.State != view.StateUnreachable {
		t.Errorf("killed controller %d: state %s, want unreachable", old, n.State)
	}
	if !hasEvent(rec.Frames, func(ev cluster.Event) bool {
		return ev.Kind == cluster.EventElection && ev.Inferred && ev.Node == v.LeaderID && strings.Contains(ev.Message, fmt.Sprintf("→ %d", v.LeaderEpoch))
	}) {
		t.Errorf("no inferred election of %d in epoch %d among the events", v.LeaderID, v.LeaderEpoch)
	}

	// A killed broker: unreachable at once, fenced once its session ends.
	if err := kc.Kill(102); err != nil {
		t.Fatal(err)
	}
	v = waitAttached("broker 102 fenced", func(v *view.View) bool {
		n, ok := v.Node(102)
		return ok && n.State == view.StateUnreachable && n.Broker != nil && n.Broker.Fenced
	})
	if !hasEvent(rec.Frames, func(ev cluster.Event) bool {
		return ev.Kind == cluster.EventBrokerFenced && ev.Node == 102 && ev.Inferred
	}) {
		t.Error("no inferred broker-fenced event for 102")
	}
	if _, err := c.Do(ctx, cluster.Action{Kind: cluster.ActKill}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("kill on an attached cluster: %v, want a refusal", err)
	}
	if os.Getenv("KRAFTLAB_TUI_RECORD") != "" {
		b, err := json.MarshalIndent(rec, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "tui", "testdata", "attached.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote tui/testdata/attached.json: %d frames", len(rec.Frames))
	}
}

// compareQuorum checks the quorum against kafka-metadata-quorum describe
// --status and --replication run just before and after one poll: the same
// leader, epoch, voters and observers, a high watermark between the two
// tools', and each replica with the same status.
func compareQuorum(t *testing.T, k *Kafka, c *attach.Cluster, boot string) {
	t.Helper()
	status := func() map[string]string {
		r := runTool(t, k, MainMetadataQuorum, "--bootstrap-server", boot, "describe", "--status")
		if r.Err != nil {
			t.Fatalf("describe --status: %v", r.Err)
		}
		_, vals := ParseStatus(r.Stdout)
		return vals
	}
	before := status()
	v, err := c.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after := status()
	rep := runTool(t, k, MainMetadataQuorum, "--bootstrap-server", boot, "describe", "--replication")
	if rep.Err != nil {
		t.Fatalf("describe --replication: %v", rep.Err)
	}
	if before["LeaderEpoch"] != after["LeaderEpoch"] {
		t.Skip("an election between the reads; nothing to compare")
	}
	if got := strconv.Itoa(int(v.LeaderID)); got != before["LeaderId"] {
		t.Errorf("leader %s, kafka-metadata-quorum says %s", got, before["LeaderId"])
	}
	if got := strconv.Itoa(int(v.LeaderEpoch)); got != before["LeaderEpoch"] {
		t.Errorf("epoch %s, kafka-metadata-quorum says %s", got, before["LeaderEpoch"])
	}
	lo, _ := strconv.ParseInt(before["HighWatermark"], 10, 64)
	hi, _ := strconv.ParseInt(after["HighWatermark"], 10, 64)
	if v.HighWatermark < lo || v.HighWatermark > hi {
		t.Errorf("high watermark %d, kafka-metadata-quorum read %d before and %d after", v.HighWatermark, lo, hi)
	}
	for key, got := range map[string][]view.Replica{"CurrentVoters": v.CurrentVoters, "CurrentObservers": v.CurrentObservers} {
		var want []quorumNode
		if err := json.Unmarshal([]byte(before[key]), &want); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		var gotIDs, wantIDs []int32
		for _, r := range got {
			gotIDs = append(gotIDs, r.NodeID)
		}
		for _, n := range want {
			wantIDs = append(wantIDs, n.ID)
		}
		slices.Sort(gotIDs)
		slices.Sort(wantIDs)
		if !slices.Equal(gotIDs, wantIDs) {
			t.Errorf("%s %v, kafka-metadata-quorum says %v", key, gotIDs, wantIDs)
		}
	}
	_, rows := ParseTable(rep.Stdout)
	statuses := map[string]string{}
	for _, r := range append(slices.Clone(v.CurrentVoters), v.CurrentObservers...) {
		statuses[strconv.Itoa(int(r.NodeID))] = string(r.Status)
	}
	for _, row := range rows {
		if got := statuses[row["NodeId"]]; got != row["Status"] {
			t.Errorf("replica %s: status %q, describe --replication says %q", row["NodeId"], got, row["Status"])
		}
	}
}

// compareTopics checks every partition against kafka-topics --describe.
func compareTopics(t *testing.T, k *Kafka, c *attach.Cluster, boot string) {
	t.Helper()
	r := runTool(t, k, MainTopics, "--bootstrap-server", boot, "--describe", "--topic", "attached")
	if r.Err != nil {
		t.Fatalf("kafka-topics --describe: %v", r.Err)
	}
	v, err := c.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := ParseTopicsDescribe(r.Stdout)
	got, ok := v.Topic("attached")
	if len(want) != 1 || !ok {
		t.Fatalf("kafka-topics described %d topics; attached read %v", len(want), ok)
	}
	if got.ID != want[0].TopicID {
		t.Errorf("topic id %s, kafka-topics says %s", got.ID, want[0].TopicID)
	}
	for i, wp := range want[0].Partitions {
		if i >= len(got.Partitions) {
			t.Fatalf("attached read %d partitions, kafka-topics %d", len(got.Partitions), len(want[0].Partitions))
		}
		gp := got.Partitions[i]
		if gp.Partition != wp.Partition || gp.Leader != wp.Leader || !slices.Equal(gp.Replicas, wp.Replicas) || !slices.Equal(gp.Isr, wp.Isr) ||
			(!wp.ElrUnknown && (!slices.Equal(gp.Elr, orNone(wp.Elr)) || !slices.Equal(gp.LastKnownElr, orNone(wp.LastKnownElr)))) {
			t.Errorf("partition %d: %s; kafka-topics: leader %d, replicas %v, isr %v, elr %v, last known elr %v",
				wp.Partition, gp.Summary(), wp.Leader, wp.Replicas, wp.Isr, wp.Elr, wp.LastKnownElr)
		}
	}
}

func orNone(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

func hasEvent(frames []attachFrame, match func(cluster.Event) bool) bool {
	for _, f := range frames {
		if slices.ContainsFunc(f.Events, match) {
			return true
		}
	}
	return false
}

func nodeStates(v *view.View) string {
	var s []string
	for _, n := range v.Nodes {
		s = append(s, fmt.Sprintf("%d:%s", n.ID, n.State))
		if n.Broker != nil && n.Broker.Fenced {
			s[len(s)-1] += "(fenced)"
		}
	}
	return strings.Join(s, " ")
}

// TestAttachWithSCRAM reads a Kafka 4.4 cluster whose brokers take only
// SASL/SCRAM, with the client properties file Kafka's tools would take
// (--command-config): the right password reads the quorum and brokers, a
// wrong one is refused, saying so.
func TestAttachWithSCRAM(t *testing.T) {
	k := needKafka(t)
	ctx := context.Background()
	const admin = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`
	kc, err := StartKafkaCluster(ctx, k, t.TempDir(), KafkaClusterShape{Controllers: 1, Brokers: 1, BrokerProtocol: "SASL_PLAINTEXT",
		FormatArgs: []string{"--add-scram", "SCRAM-SHA-256=[name=admin,password=admin-secret]", "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]"},
		Extra: append(slices.Clone(sameTimings), "sasl.enabled.mechanisms=SCRAM-SHA-256", "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256",
			"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config="+admin)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range []int32{1, 101} {
				t.Logf("kafka node %d's log:\n%s", id, indent(kc.Nodes[id].Log(20)))
			}
		}
		kc.Close()
	})
	props := filepath.Join(t.TempDir(), "client.properties")
	write := func(password string) {
		t.Helper()
		body := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="` + password + "\";\n"
		if err := os.WriteFile(props, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("alice-secret")
	p, err := attach.ReadClientProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	cfg := attach.Config{Bootstrap: kc.BrokerAddrs(), Properties: p, Interval: time.Hour, Timeout: 5 * time.Second}
	waitAttachedBroker(t, cfg, "SCRAM")
	write("wrong")
	if p, err = attach.ReadClientProperties(props); err != nil {
		t.Fatal(err)
	}
	cfg.Properties = p
	if _, err := attach.Dial(ctx, cfg); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authentication") {
		t.Fatalf("a wrong password: %v, want an authentication failure", err)
	}
}

// TestAttachWithTLS reads a Kafka 4.4 cluster whose brokers take only
// TLS, with a PEM trust store (ssl.truststore.type=PEM): trusting the
// cluster's CA reads it; without that trust store the error says the
// certificate is not trusted.
func TestAttachWithTLS(t *testing.T) {
	k := needKafka(t)
	ctx := context.Background()
	dir := t.TempDir()
	caPEM, certPEM, keyPEM := testCertificates(t)
	ca, keystore := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "broker.pem")
	if err := os.WriteFile(ca, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keystore, append(keyPEM, certPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	kc, err := StartKafkaCluster(ctx, k, filepath.Join(dir, "kafka"), KafkaClusterShape{Controllers: 1, Brokers: 1, BrokerProtocol: "SSL",
		Extra: append(slices.Clone(sameTimings), "ssl.keystore.type=PEM", "ssl.keystore.location="+keystore,
			"ssl.truststore.type=PEM", "ssl.truststore.location="+ca)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range []int32{1, 101} {
				t.Logf("kafka node %d's log:\n%s", id, indent(kc.Nodes[id].Log(20)))
			}
		}
		kc.Close()
	})
	cfg := attach.Config{Bootstrap: kc.BrokerAddrs(), Interval: time.Hour, Timeout: 5 * time.Second,
		Properties: map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca}}
	waitAttachedBroker(t, cfg, "TLS")
	cfg.Properties = map[string]string{"security.protocol": "SSL"}
	if _, err := attach.Dial(ctx, cfg); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the cluster's CA: %v, want a certificate error", err)
	}
}

// testCertificates makes a CA and a certificate it signs for 127.0.0.1,
// with its PKCS#8 key, all PEM.
func testCertificates(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kraftlab test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8})
}

// waitAttachedBroker waits, while the JVMs start, until cfg reads
// controller 1 leading and broker 101 running and unfenced.
func waitAttachedBroker(t *testing.T, cfg attach.Config, how string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := attach.Dial(ctx, cfg)
		if err == nil {
			v, _ := c.Refresh(ctx)
			c.Close()
			if b, ok := v.Node(101); v.LeaderID == 1 && ok && b.State == view.StateRunning && b.Broker != nil && !b.Broker.Fenced {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("attach with %s: %v", how, err)
		}
		time.Sleep(500 * time.Millisecond) // the JVMs are starting
	}
}
