package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/internal/zookeeper"
)

// Kafka 3.9, fetched on first use: only the ZooKeeper-era tests need it.
var (
	kafka39Once sync.Once
	kafka39     *Kafka
	kafka39Err  error
)

// needKafka39 skips the test when Kafka 3.9 cannot run here; set
// KRAFTLAB_INTEROP_REQUIRE=1 to fail instead.
func needKafka39(t *testing.T) *Kafka {
	t.Helper()
	kafka39Once.Do(func() {
		start := time.Now()
		kafka39, kafka39Err = SetupVersion(context.Background(), KafkaZkVersion)
		if kafka39Err == nil {
			t.Logf("Kafka %s jars in %s (%.1fs)", KafkaZkVersion, kafka39.JarsDir, time.Since(start).Seconds())
		}
	})
	if kafka39Err != nil {
		if os.Getenv("KRAFTLAB_INTEROP_REQUIRE") != "" {
			t.Fatal(kafka39Err)
		}
		t.Skipf("skipped: Kafka %s: %v", KafkaZkVersion, kafka39Err)
	}
	return kafka39
}

// needZooKeeper skips the test when `up --mode zk` cannot start its
// ZooKeeper here.
func needZooKeeper(t *testing.T) zookeeper.Runtime {
	t.Helper()
	rt, err := zookeeper.Find()
	if err != nil {
		if os.Getenv("KRAFTLAB_INTEROP_REQUIRE") != "" {
			t.Fatal(err)
		}
		t.Skipf("skipped: no ZooKeeper for up --mode zk: %v", err)
	}
	return rt
}

// startZkPlayground starts `up --mode zk` for the test and stops it at
// cleanup. It has no metadata quorum to be caught up with: the test waits
// for its controller instead.
func startZkPlayground(t *testing.T, upArgs ...string) *Playground {
	t.Helper()
	bin := needKraftlab(t)
	dir := t.TempDir()
	p, err := StartPlayground(context.Background(), bin, filepath.Join(dir, "home"), filepath.Join(dir, "data"), append([]string{"--mode", "zk"}, upArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.Ended() {
			p.Down(context.Background())
		}
	})
	return p
}

// zkStatus is the part of `status --json` a zk playground adds.
type zkStatus struct {
	ZooKeeper struct {
		Addr         string `json:"addr"`
		ControllerID int32  `json:"controllerId"`
		Channels     []struct {
			Broker         int32  `json:"broker"`
			Queued         int    `json:"queued"`
			InFlight       string `json:"inFlight"`
			LeaderAndIsr   int64  `json:"leaderAndIsr"`
			UpdateMetadata int64  `json:"updateMetadata"`
			Retries        int64  `json:"retries"`
		} `json:"channels"`
	} `json:"zookeeper"`
}

func readZkStatus(t *testing.T, p *Playground) zkStatus {
	t.Helper()
	out, err := p.Run(context.Background(), "status", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st zkStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v: %s", err, out)
	}
	return st
}

// Apache Kafka 3.9 judges the ZooKeeper era: a real Kafka 3.9 broker joins
// a `kraftlab up --mode zk` playground through its ZooKeeper. The two kinds
// of node authenticate to each other as the playground's member
// (SASL/SCRAM-SHA-256 as kraftlab-member, whose credential Kafka's
// kafka-configs writes into ZooKeeper) on the listener both call
// PLAINTEXT, the one kraftlab's nodes reach each other at. The Kafka
// broker registers; kraftlab's controller pushes it UpdateMetadata and
// LeaderAndIsr; a topic with a replica on each replicates both ways, as
// kraftlab's status and the records read back with acks=all tell. Once
// kraftlab's controller broker is killed, the Kafka broker wins
// /controller and leads both partitions; kraftlab's broker, started
// again, takes the Kafka controller's pushes, rejoins both ISRs, leads
// again after kafka-leader-election, and both kinds of follower hold what
// the other kind of leader took.
//
// kcat reaches kraftlab's broker anonymously and Kafka's as the member:
// Kafka's PLAINTEXT listener is SASL only, and librdkafka will not
// authenticate to kraftlab's broker, which lists SaslHandshake at v1 only
// where Kafka lists v0 to v1 ("SASL Handshake not supported by broker").
func TestKafka39BrokerJoinsZkPlayground(t *testing.T) {
	zkrt := needZooKeeper(t)
	k := needKafka39(t)
	kcat := needKcat(t)
	p := startZkPlayground(t, "--brokers", "1", "--profile", "fast")
	st := readZkStatus(t, p)
	zkAddr := st.ZooKeeper.Addr
	poll.Until(t, 20*time.Second, "kraftlab's broker 101 to be the controller", func() bool { st = readZkStatus(t, p); return st.ZooKeeper.ControllerID == 101 },
		func() string { return fmt.Sprintf("%+v", st.ZooKeeper) })
	t.Logf("playground: ZooKeeper at %s, controller 101, broker 101 at %s", zkAddr, p.Brokers[0])

	// The member's credential, where a Kafka 3.9 broker looks for SCRAM
	// users: /config/users in ZooKeeper.
	secret, err := os.ReadFile(filepath.Join(p.DataDir, "cluster-secret"))
	if err != nil {
		t.Fatal(err)
	}
	password := strings.TrimSpace(string(secret))
	r := k.Run(context.Background(), 90*time.Second, MainConfigs39, "--zookeeper", zkAddr, "--alter", "--entity-type", "users", "--entity-name", "kraftlab-member",
		"--add-config", "SCRAM-SHA-256=[iterations=4096,password="+password+"]")
	if r.Err != nil {
		t.Fatalf("kafka-configs --zookeeper: %v: %s%s", r.Err, r.Stdout, r.Stderr)
	}
	t.Logf("kafka-configs --zookeeper %s --alter --entity-type users --entity-name kraftlab-member --add-config SCRAM-SHA-256=[password=<the secret>] (%.1fs): %s",
		zkAddr, r.Took.Seconds(), strings.TrimSpace(r.Stdout[strings.LastIndex(r.Stdout, "Completed"):]))

	b, err := StartZkBroker(context.Background(), k, t.TempDir(), ZkJoin{ID: 200, ZooKeeper: zkAddr, User: "kraftlab-member", Password: password},
		"zookeeper.session.timeout.ms=6000", "replica.lag.time.max.ms=10000", "replica.fetch.wait.max.ms=100", "leader.imbalance.check.interval.seconds=300")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	why := func() string { return "the Kafka 3.9 broker printed:\n" + b.Output(30) }

	// 1. It registers: ZooKeeper holds /brokers/ids/200.
	var reg string
	poll.Until(t, 60*time.Second, "/brokers/ids/200 in ZooKeeper", func() bool {
		if b.Exited() {
			t.Fatalf("the Kafka 3.9 broker exited: %s", why())
		}
		reg, err = zkrt.CLI(context.Background(), zkAddr, "get", "/brokers/ids/200")
		return err == nil && strings.Contains(reg, b.Addr)
	}, func() string { return fmt.Sprintf("%v %s\n%s", err, reg, why()) })
	t.Logf("ZooKeeper: /brokers/ids/200 = %s", strings.TrimSpace(reg))

	// 2. kraftlab's controller pushes it UpdateMetadata: its sender to
	// 200 has answers.
	poll.Until(t, 30*time.Second, "an answered UpdateMetadata from 200 at kraftlab's controller", func() bool {
		st = readZkStatus(t, p)
		for _, c := range st.ZooKeeper.Channels {
			if c.Broker == 200 && c.UpdateMetadata > 0 {
				return true
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("channels %+v\nkraftlab's log:\n%s\n%s", st.ZooKeeper.Channels, serverLogTail(p, 20), why())
	})
	t.Logf("kraftlab's controller → 200: %+v", st.ZooKeeper.Channels)

	// 3. A topic with a replica on each: kafka-topics 3.9 through
	// kraftlab's controller broker; kraftlab's controller sends 200
	// LeaderAndIsr, 200 leads one partition and follows kraftlab's 101 on
	// the other, and both replicas are in both ISRs, as Kafka's own
	// broker answers Metadata.
	if r := runTool(t, k, MainTopics, "--bootstrap-server", p.Brokers[0], "--create", "--topic", "judged", "--replica-assignment", "101:200,200:101"); r.Err != nil {
		t.Fatalf("kafka-topics --create: %v", r.Err)
	}
	member := []string{"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-256", "-X", "sasl.username=kraftlab-member", "-X", "sasl.password=" + password}
	var md kcatMetadata
	poll.Until(t, 30*time.Second, "both replicas in both partitions' ISRs, as the Kafka 3.9 broker tells", func() bool {
		md = kcatMetadataOf(t, kcat, append([]string{"-b", b.Addr, "-L", "-J", "-t", "judged"}, member...)...)
		if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
			return false
		}
		for _, part := range md.Topics[0].Partitions {
			if part.Leader != []int32{101, 200}[part.Partition] || len(part.Isrs) != 2 {
				return false
			}
		}
		return true
	}, func() string {
		return fmt.Sprintf("%+v\nchannels %+v\n%s", md, readZkStatus(t, p).ZooKeeper.Channels, why())
	})
	t.Logf("the Kafka 3.9 broker's Metadata: controller %d, brokers %+v, partitions %+v", md.ControllerID, md.Brokers, md.Topics[0].Partitions)
	if md.ControllerID != 101 {
		t.Errorf("the Kafka 3.9 broker names controller %d, want kraftlab's 101", md.ControllerID)
	}

	// 4. kcat produces to each leader with acks=all and reads each
	// partition back from it: a leader hands out only what its ISR (both
	// brokers) has, so each follower fetched from the other kind of
	// leader. kraftlab's broker takes anonymous clients beside members;
	// Kafka's PLAINTEXT listener is SASL only.
	viaKraftlab, viaKafka := []string{"-b", p.Brokers[0]}, append([]string{"-b", b.Addr}, member...)
	produceAndRead(t, kcat, "judged", 0, viaKraftlab, "before")
	produceAndRead(t, kcat, "judged", 1, viaKafka, "before")
	// kraftlab's replicas, as its status tells: 101's log of partition
	// 1 has the records Kafka's leader took (it fetched them), and 101
	// as leader of partition 0 heard Kafka's follower fetch all of its.
	waitReplica(t, p, "judged", 1, 101, "kraftlab's follower 101 to have fetched Kafka's 10 records", func(r view.PartitionReplica) bool { return r.LogEndOffset >= 10 })
	waitReplica(t, p, "judged", 0, 200, "kraftlab's leader 101 to have heard Kafka's follower 200 fetch its 10 records", func(r view.PartitionReplica) bool { return r.LeaderLogEndOffset >= 10 })

	// 5. kraftlab's controller broker is killed: once ZooKeeper expires
	// its session, Kafka's broker wins /controller, elects itself leader
	// of partition 0 and shrinks the ISRs to itself.
	if _, err := p.Run(context.Background(), "kill", "101"); err != nil {
		t.Fatal(err)
	}
	var ctl string
	poll.Until(t, 30*time.Second, "the Kafka 3.9 broker to win /controller", func() bool {
		ctl, err = zkrt.CLI(context.Background(), zkAddr, "get", "/controller")
		return err == nil && strings.Contains(ctl, `"brokerid":200`)
	}, func() string { return fmt.Sprintf("%v %s\n%s", err, ctl, why()) })
	t.Logf("ZooKeeper: /controller = %s", strings.TrimSpace(ctl))
	poll.Until(t, 30*time.Second, "Kafka's controller to move partition 0 to 200 and shrink the ISRs", func() bool {
		md = kcatMetadataOf(t, kcat, append([]string{"-b", b.Addr, "-L", "-J", "-t", "judged"}, member...)...)
		return md.ControllerID == 200 && len(md.Topics) == 1 && len(md.Topics[0].Partitions) == 2 &&
			md.Topics[0].Partitions[0].Leader == 200 && len(md.Topics[0].Partitions[0].Isrs) == 1 && len(md.Topics[0].Partitions[1].Isrs) == 1
	}, func() string { return fmt.Sprintf("%+v\n%s", md, why()) })
	t.Logf("under Kafka's controller, 101 dead: partitions %+v", md.Topics[0].Partitions)

	// 6. kraftlab's broker, started again, works under Kafka's
	// controller: it takes its UpdateMetadata (its own Metadata names
	// controller 200) and LeaderAndIsr, follows Kafka's leader back into
	// both ISRs (Kafka's leader asks its own controller with
	// AlterPartition).
	if _, err := p.Run(context.Background(), "start", "101"); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 60*time.Second, "kraftlab's 101 back in both ISRs under Kafka's controller, as 101 itself tells", func() bool {
		md = kcatMetadataOf(t, kcat, "-b", p.Brokers[0], "-L", "-J", "-t", "judged")
		if md.ControllerID != 200 || len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
			return false
		}
		for _, part := range md.Topics[0].Partitions {
			if len(part.Isrs) != 2 {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("%+v\nkraftlab's log:\n%s\n%s", md, serverLogTail(p, 20), why()) })
	t.Logf("kraftlab's 101 restarted: its Metadata names controller %d; partitions %+v", md.ControllerID, md.Topics[0].Partitions)
	st = readZkStatus(t, p)
	if st.ZooKeeper.ControllerID != 200 {
		t.Errorf("kraftlab status names controller %d, want Kafka's 200", st.ZooKeeper.ControllerID)
	}

	// 7. Kafka's preferred leader election gives partition 0 back to
	// kraftlab's 101 (LeaderAndIsr from Kafka's controller makes it
	// leader), which takes records with acks=all that Kafka's 200
	// follows.
	adminCfg := filepath.Join(t.TempDir(), "admin.properties")
	if err := os.WriteFile(adminCfg, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="kraftlab-member" password="`+password+"\";\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runTool(t, k, MainLeaderElection, "--bootstrap-server", b.Addr, "--admin.config", adminCfg, "--election-type", "preferred", "--topic", "judged", "--partition", "0"); r.Err != nil {
		t.Fatalf("kafka-leader-election: %v", r.Err)
	}
	poll.Until(t, 30*time.Second, "kraftlab's 101 to lead partition 0 again", func() bool {
		md = kcatMetadataOf(t, kcat, "-b", p.Brokers[0], "-L", "-J", "-t", "judged")
		return len(md.Topics) == 1 && len(md.Topics[0].Partitions) == 2 && md.Topics[0].Partitions[0].Leader == 101
	}, func() string { return fmt.Sprintf("%+v\n%s", md, why()) })
	produceAndRead(t, kcat, "judged", 0, viaKraftlab, "after")
	produceAndRead(t, kcat, "judged", 1, viaKafka, "after")
	// kraftlab's status shows no topics while the controller is not
	// one of its brokers, so the replicas' own logs tell: each follower's
	// segment holds the last record its leader took.
	waitSegmentHolds(t, b.LogDir, "judged-0", "after 0-09")
	waitSegmentHolds(t, filepath.Join(p.DataDir, "node-101"), "judged-1", "after 1-09")
	if c := b.Complaints(10); len(c) > 0 {
		t.Logf("the Kafka 3.9 broker's warnings and errors:\n    %s", strings.Join(c, "\n    "))
	}
}

// waitReplica polls `status --json` until broker's replica of topic's
// partition part, as kraftlab shows it, satisfies ok, and logs it.
func waitReplica(t *testing.T, p *Playground, topic string, part, broker int32, what string, ok func(view.PartitionReplica) bool) {
	t.Helper()
	var last string
	poll.Until(t, 30*time.Second, what, func() bool {
		out, err := p.Run(context.Background(), "status", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Topics []view.Topic `json:"topics"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v", err)
		}
		for _, tp := range st.Topics {
			for _, pt := range tp.Partitions {
				if tp.Name != topic || pt.Partition != part {
					continue
				}
				last = fmt.Sprintf("%+v", pt.ReplicaStates)
				for _, r := range pt.ReplicaStates {
					if r.Broker == broker && ok(r) {
						t.Logf("kraftlab status: %s-%d replica %d: %+v", topic, part, broker, r)
						return true
					}
				}
			}
		}
		return false
	}, func() string { return "replica states " + last })
}

// waitSegmentHolds polls the log segments of partition folder part under
// root until one holds want (records are not compressed), and logs it.
func waitSegmentHolds(t *testing.T, root, part, want string) {
	t.Helper()
	var seen []string
	poll.Until(t, 30*time.Second, fmt.Sprintf("a segment of %s under %s to hold %q", part, root, want), func() bool {
		seen = seen[:0]
		found := false
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Base(filepath.Dir(path)) != part || !strings.HasSuffix(path, ".log") {
				return nil
			}
			seen = append(seen, path)
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(want)) {
				t.Logf("%s holds %q", path, want)
				found = true
				return fs.SkipAll
			}
			return nil
		})
		return found
	}, func() string { return fmt.Sprintf("segments %q", seen) })
}

// produceAndRead produces ten records to partition part of topic through
// the broker args name, with acks=all, and reads the partition back there.
func produceAndRead(t *testing.T, kcat, topic string, part int, args []string, tag string) {
	t.Helper()
	var sent []string
	for i := range 10 {
		sent = append(sent, fmt.Sprintf("%s %d-%02d", tag, part, i))
	}
	p := strconv.Itoa(part)
	kcatRun(t, kcat, strings.Join(sent, "\n")+"\n", append([]string{"-P", "-t", topic, "-p", p, "-X", "acks=all", "-X", "enable.idempotence=false"}, args...)...)
	out := kcatRun(t, kcat, "", append([]string{"-C", "-t", topic, "-p", p, "-o", "beginning", "-e", "-q"}, args...)...)
	var read []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, tag+" ") {
			read = append(read, l)
		}
	}
	if !slices.Equal(read, sent) {
		t.Fatalf("partition %d: kcat -C read %q, %d records were produced", part, read, len(sent))
	}
	t.Logf("partition %d: produced and read back %d records (%s)", part, len(sent), strings.Join(args[:2], " "))
}

// kcatRun runs kcat with stdin and returns its output; its log hides the
// member's password.
func kcatRun(t *testing.T, kcat, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		shown := slices.Clone(args)
		for i, a := range shown {
			if strings.HasPrefix(a, "sasl.password=") {
				shown[i] = "sasl.password=<the secret>"
			}
		}
		t.Fatalf("kcat %s: %v: %s%s", strings.Join(shown, " "), err, out, errOut.String())
	}
	return string(out)
}

// kcatMetadataOf runs kcat -L -J and decodes its answer.
func kcatMetadataOf(t *testing.T, kcat string, args ...string) kcatMetadata {
	t.Helper()
	var md kcatMetadata
	if err := json.Unmarshal([]byte(runKcatQuiet(t, kcat, args...)), &md); err != nil {
		t.Fatalf("kcat -L -J: %v", err)
	}
	return md
}

// runKcatQuiet runs kcat and returns its output, logging only a failure.
func runKcatQuiet(t *testing.T, kcat string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, args...).Output()
	if err != nil {
		t.Fatalf("kcat %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serverLogTail is the last n lines of the playground's server log.
func serverLogTail(p *Playground, n int) string {
	b, _ := os.ReadFile(p.LogFile)
	return lastLines(string(b), n)
}
