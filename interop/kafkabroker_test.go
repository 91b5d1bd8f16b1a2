package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// playgroundJoin is what a Kafka broker needs to join p's controllers:
// the cluster id from a controller's meta.properties and the member
// secret from the data folder.
func playgroundJoin(t *testing.T, p *Playground, id int32) BrokerJoin {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join(p.DataDir, "node-1", "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	var cid string
	for _, line := range strings.Split(string(meta), "\n") {
		if v, ok := strings.CutPrefix(line, "cluster.id="); ok {
			cid = v
		}
	}
	secret, err := os.ReadFile(filepath.Join(p.DataDir, "cluster-secret"))
	if err != nil {
		t.Fatal(err)
	}
	var voters []string
	for vid, addr := range p.Controllers {
		voters = append(voters, fmt.Sprintf("%d@%s", vid, addr))
	}
	slices.Sort(voters)
	return BrokerJoin{ID: id, ClusterID: cid, Voters: strings.Join(voters, ","), User: "kraftlab-member", Password: strings.TrimSpace(string(secret))}
}

// waitForMetadata polls `kraftlab metadata PATH` (the active controller's
// image) until its text contains want.
func waitForMetadata(t *testing.T, p *Playground, path, want string, timeout time.Duration, why func() string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var out string
	for {
		out, _ = p.Run(context.Background(), "metadata", path)
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, kraftlab metadata %s says %q, not %q\n%s", timeout, path, out, want, why())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A real Kafka 4.4 broker joins kraftlab's controllers: it fetches the
// metadata log as an observer (over SASL/SCRAM with the playground's
// member secret), registers, heartbeats and is unfenced; it hosts the
// partitions kraftlab's controller assigns it, forwards kafka-topics'
// CreateTopics to it in an Envelope, and serves kcat's produce and consume
// beside kraftlab's own broker; killed, it is fenced.
//
// Where it stops: replication between the two kinds of broker. A kraftlab
// follower authenticates to its leader with SASL on the one listener,
// which Kafka's PLAINTEXT listener refuses (ILLEGAL_SASL_STATE), and a
// Kafka follower's fetch is not a member's, which kraftlab's leader
// refuses (TOPIC_AUTHORIZATION_FAILED); so the topic here has one
// replica per partition.
func TestKafkaBrokerJoinsKraftlab(t *testing.T) {
	k := needKafka(t)
	kcat := needKcat(t)
	// A session the JVM's heartbeats keep on a loaded machine. A Kafka
	// broker finds the active controller's listener in the voter set
	// (RaftControllerNodeProvider): the playground's standalone controller
	// writes its own entry's listener once it leads (UpdateRaftVoter's
	// rules; docs/design.md, --standalone).
	p := startPlayground(t, "--controllers", "1", "--brokers", "1", "--profile", "fast", "--set", "broker.session.timeout.ms=6000")
	brokersUnfenced(t, p)
	b, err := StartBroker(context.Background(), k, t.TempDir(), playgroundJoin(t, p, 201), "broker.heartbeat.interval.ms=500", "broker.session.timeout.ms=6000")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	why := func() string { return "the Kafka broker printed:\n" + b.Output(40) }
	reg := waitForMetadata(t, p, "/image/cluster/brokers/201", "fenced=false", 90*time.Second, why)
	if !strings.Contains(reg, "port="+b.Addr[strings.LastIndexByte(b.Addr, ':')+1:]) {
		t.Errorf("the registration does not carry the Kafka broker's listener %s: %s", b.Addr, reg)
	}
	// kraftlab brokers lists it beside the playground's own.
	out, err := p.Run(context.Background(), "brokers", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		ID       int32  `json:"nodeId"`
		Listener string `json:"listener"`
		External bool   `json:"external"`
		Fenced   bool   `json:"fenced"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("brokers --json: %v: %s", err, out)
	}
	if len(rows) != 2 || rows[1].ID != 201 || !rows[1].External || rows[1].Listener != b.Addr || rows[1].Fenced {
		t.Errorf("kraftlab brokers --json = %+v, want 101 and the unfenced external 201 at %s", rows, b.Addr)
	}

	// kafka-topics through the Kafka broker: it forwards CreateTopics to
	// kraftlab's active controller in an Envelope.
	if r := runTool(t, k, MainTopics, "--bootstrap-server", b.Addr, "--create", "--topic", "joined", "--partitions", "4", "--replication-factor", "1"); r.Err != nil {
		t.Fatalf("kafka-topics --create through the Kafka broker: %v", r.Err)
	}
	both := p.Brokers[0] + "," + b.Addr
	var md kcatMetadata
	deadline := time.Now().Add(30 * time.Second)
	for {
		js := runKcat(t, kcat, "-b", b.Addr, "-L", "-J", "-t", "joined")
		if err := json.Unmarshal([]byte(js), &md); err != nil {
			t.Fatalf("kcat -L -J: %v", err)
		}
		if len(md.Topics) == 1 && len(md.Topics[0].Partitions) == 4 && len(md.Brokers) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Kafka broker's Metadata never showed both brokers and the topic's 4 partitions: %s", js)
		}
		time.Sleep(200 * time.Millisecond)
	}
	leaders := map[int32]int{}
	for _, part := range md.Topics[0].Partitions {
		leaders[part.Leader]++
	}
	if leaders[101] == 0 || leaders[201] == 0 {
		t.Fatalf("partition leaders %v: want partitions on both kraftlab's broker 101 and Kafka's 201", leaders)
	}

	var sent []string
	for i := range 40 {
		sent = append(sent, fmt.Sprintf("joined %02d", i))
	}
	runKcatIn(t, kcat, strings.Join(sent, "\n")+"\n", "-b", both, "-P", "-t", "joined", "-X", "enable.idempotence=false")
	out = runKcat(t, kcat, "-b", both, "-C", "-t", "joined", "-o", "beginning", "-e", "-q")
	read := strings.Split(strings.TrimRight(out, "\n"), "\n")
	slices.Sort(read)
	if !slices.Equal(read, sent) {
		t.Fatalf("kcat -C read %d records from both brokers, %d were produced: %q", len(read), len(sent), read)
	}

	// Killed, the Kafka broker stops heartbeating: kraftlab's controller
	// fences it after the session timeout.
	b.Kill()
	waitForMetadata(t, p, "/image/cluster/brokers/201", "fenced=true", 30*time.Second, why)
}
