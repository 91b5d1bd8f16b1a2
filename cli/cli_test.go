package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/clustertest"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/scenario"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
	"github.com/kraftlab/kraftlab/internal/zookeeper"
)

func TestBadInputExitsTwoWithOneHelpfulLine(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		args  []string
		wants []string
	}{
		{[]string{"status"}, []string{`kraftlab: no playground running (session "default"); start one with: kraftlab up`}},
		{[]string{"kill", "leader", "--session", "demo"}, []string{`no playground running (session "demo"); start one with: kraftlab up --session demo`}},
		{[]string{"kil", "3"}, []string{`unknown command "kil"; did you mean kill? (see: kraftlab --help)`}},
		{[]string{"explode"}, []string{`unknown command "explode" (see: kraftlab --help)`}},
		{[]string{"kill", "x"}, []string{`bad node "x": want a node ID`}},
		{[]string{"kill"}, []string{"kill takes one NODE, got nothing; e.g.: kraftlab kill leader"}},
		{[]string{"kill", "1", "2"}, []string{"kill takes one NODE, got 2 (1 2)"}},
		{[]string{"wait"}, []string{"wait needs a condition, e.g.: kraftlab wait leader (every condition: kraftlab wait --help)"}},
		{[]string{"wait", "leader", "--timeout", "10x"}, []string{`invalid argument "10x" for "--timeout" flag`, "(see: kraftlab wait --help)"}},
		{[]string{"wait", "leader", "--timeout", "-1s"}, []string{"--timeout must be positive, got -1s"}},
		{[]string{"link", "1", "2"}, []string{"link needs --delay, --jitter or --loss"}},
		{[]string{"link", "1", "2", "--delay", "1500us"}, []string{"must be whole milliseconds"}},
		{[]string{"link", "1", "2", "--delay", "-1s"}, []string{"must not be negative"}},
		{[]string{"link", "1", "2", "--jitter", "2m"}, []string{"must be at most 1m0s"}},
		{[]string{"link", "1", "2", "--loss", "150%"}, []string{"want 0% to 100%"}},
		{[]string{"link", "1", "2", "--loss", "lots"}, []string{"want a share of messages such as 10% or 0.1"}},
		{[]string{"disk", "3"}, []string{"disk needs --delay, e.g.: kraftlab disk 3 --delay 100ms (to make it normal again: --delay 0)"}},
		{[]string{"disk", "3", "--delay", "-5ms"}, []string{`invalid argument "-5ms" for "--delay" flag: must be between 0 and 10s (see: kraftlab disk --help)`}},
		{[]string{"disk", "3", "--delay", "11s"}, []string{"must be between 0 and 10s"}},
		{[]string{"disk", "3", "--delay", "1500us"}, []string{"must be whole milliseconds"}},
		{[]string{"disk", "3", "--delay", "slow"}, []string{"want a duration like 5s or 500ms"}},
		{[]string{"disk", "1", "2", "--delay", "1s"}, []string{"disk takes one NODE, got 2 (1 2)"}},
		{[]string{"partition", "1"}, []string{"partition takes two NODEs, got 1 (1)"}},
		{[]string{"heal", "1", "2", "3"}, []string{"heal takes no NODE, one or two, got 3 (1 2 3)"}},
		{[]string{"heal", "x"}, []string{`bad node "x"`}},
		{[]string{"resign", "2"}, []string{"resign takes no arguments"}},
		{[]string{"up", "--profile", "slow"}, []string{`unknown profile "slow"; valid profiles: workshop, kafka, fast`}},
		{[]string{"up", "--set", "controller.quorum.fetch.timout.ms=1"}, []string{"did you mean controller.quorum.fetch.timeout.ms?"}},
		{[]string{"up", "--set", "metadata.max.idle.interval.ms=soon"}, []string{`bad value "soon" for metadata.max.idle.interval.ms`}},
		{[]string{"up", "--controllers", "0"}, []string{"controllers must be between 1 and 99"}},
		{[]string{"up", "now"}, []string{`up takes no arguments, got "now"`}},
		{[]string{"up", "--quorum", "gossip"}, []string{`bad value "gossip" for --quorum: want pull (Kafka's KRaft: followers fetch) or push (classic Raft: the leader sends AppendEntries)`}},
		{[]string{"up", "--quorum", "push", "--set", "kraftlab.quorum.replication=pull"}, []string{"--quorum push and --set kraftlab.quorum.replication=pull disagree: give one of them"}},
		{[]string{"up", "--mode", "zookeeper"}, []string{`bad mode "zookeeper": want kraft (Kafka 4's KRaft, the default) or zk`}},
		{[]string{"up", "--mode", "zk", "--controllers", "3"}, []string{"--mode zk has no KRaft controllers (its controller is a broker elected through ZooKeeper); leave out --controllers"}},
		{[]string{"up", "--mode", "zk", "--quorum", "push"}, []string{"--mode zk has no metadata quorum; leave out --quorum"}},
		{[]string{"up", "--mode", "zk", "--brokers", "0"}, []string{"brokers must be between 1 and 99 in zk mode, got 0"}},
		{[]string{"status", "--bogus"}, []string{"unknown flag: --bogus (see: kraftlab status --help)"}},
		{[]string{"status", "--jsn"}, []string{"unknown flag: --jsn; did you mean --json? (see: kraftlab status --help)"}},
		{[]string{"status", "-json"}, []string{"unknown shorthand flag: 'j' in -json; did you mean --json? (see: kraftlab status --help)"}},
		{[]string{"up", "--brokr", "3"}, []string{"unknown flag: --brokr; did you mean --brokers?"}},
		{[]string{"kill", "1", "--sesion", "x"}, []string{"unknown flag: --sesion; did you mean --session?"}},
		{[]string{"--session", "a/b", "status"}, []string{`bad session name "a/b"`}},
		{[]string{"events", "--after", "x"}, []string{`invalid argument "x" for "--after"`}},
		{[]string{"scenario"}, []string{"scenario needs a subcommand"}},
		{[]string{"scenario", "run"}, []string{"scenario run needs at least one FILE"}},
		{[]string{"scenario", "run", "x.txt", "--profile", "slow"}, []string{`unknown profile "slow"`}},
		{[]string{"load", "fast"}, []string{`bad load rate "fast": want records per second, such as 200, or stop`}},
		{[]string{"load", "-5"}, []string{"kraftlab: -5 is not a flag, and load takes no negative numbers (see: kraftlab load --help)"}},
		{[]string{"wait", "leader", "--timeout", "5"}, []string{`invalid argument "5" for "--timeout" flag: want a duration like 5s or 500ms (a number needs a unit: 5s) (see: kraftlab wait --help)`}},
		{[]string{"down", "--timeout", "soon"}, []string{`invalid argument "soon" for "--timeout" flag: want a duration like 5s or 500ms (see: kraftlab down --help)`}},
		{[]string{"link", "1", "2", "--delay", "5"}, []string{`want a duration like 5s or 500ms (a number needs a unit: 5s)`}},
		{[]string{"sleep", "5"}, []string{`bad duration "5": want a duration like 5s or 500ms`}},
		{[]string{"bench", "quorum", "--duration", "2"}, []string{`invalid argument "2" for "--duration" flag: want a duration like 5s or 500ms`}},
		{[]string{"events", "--after", "-1"}, []string{`invalid argument "-1" for "--after" flag: want a whole number, 0 or more (see: kraftlab events --help)`}},
		{[]string{"up", "--brokers", "two"}, []string{`invalid argument "two" for "--brokers" flag: want a whole number (see: kraftlab up --help)`}},
		{[]string{"load", "1", "2"}, []string{"load takes a RATE or stop, got 2 arguments"}},
		{[]string{"load", "--size", "100"}, []string{"load --size needs a RATE"}},
		{[]string{"load", "stop", "--size", "100"}, []string{"load stop takes no --size"}},
		{[]string{"load", "10", "--size", "0"}, []string{`invalid argument "0" for "--size" flag: must be between 16 B and 32 KiB`}},
		{[]string{"load", "10", "--size", "lots"}, []string{"want a size such as 100, 1KiB or 4kB"}},
		{[]string{"load", "200000"}, []string{"load rate 200000 records/s must be between 0 (stop) and 100000"}},
		{[]string{"load", "100000", "--size", "1KiB"}, []string{"more than the 32 MiB/s a playground takes"}},
	}
	for _, tc := range cases {
		code, out, errOut := h.run(tc.args...)
		what := strings.Join(tc.args, " ")
		expectRun(t, what, code, out, errOut, ExitUsage, tc.wants...)
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "kraftlab: ") {
			t.Errorf("%s: want one line on stderr, got %q", what, errOut)
		}
	}
	// A bad condition is one problem, followed by the forms that would do.
	code, out, errOut := h.run("wait", "leder")
	expectRun(t, "wait leder", code, out, errOut, ExitUsage, `kraftlab: bad condition "leder": unknown condition "leder"; closest form: leader, leader == N or leader != N (see: kraftlab wait --help)`+"\n")
	if strings.Count(errOut, "\n") != 1 {
		t.Errorf("wait leder: want one line, got %q", errOut)
	}
	// A lone = is ==, said in the help and in what wait prints.
	code, out, errOut = h.run("wait", "--help")
	expectRun(t, "wait --help", code, out, errOut, ExitOK, `A single = means ==: "hwm = 5" is "hwm == 5"`)
	code, out, errOut = h.run("expect", "epoch", ">", "three")
	expectRun(t, "expect epoch > three", code, out, errOut, ExitUsage, `bad value "three": want a number, baseline or baseline+K`)
}

// waitFor polls f until it is true or fails the test after 10 seconds.
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	poll.Until(t, 10*time.Second, what, f)
}

func TestUpServesUntilDown(t *testing.T) {
	h := newHarness(t)
	var upOut, upErr lockedBuffer
	upDone := make(chan int, 1)
	ctx := testContext(t)
	go func() {
		upDone <- run(ctx, []string{"up", "--headless", "--profile", "fast", "--brokers", "1"}, h.env(&upOut, &upErr))
	}()
	waitFor(t, "up to serve", func() bool { code, _, _ := h.run("status"); return code == 0 })

	waitFor(t, "the banner", func() bool { return strings.Contains(upOut.String(), "Stop with") })
	m := regexp.MustCompile(`(?m)^  data         (\S+) \(temporary: removed on exit\)$`).FindStringSubmatch(upOut.String())
	if m == nil {
		t.Fatalf("the banner does not name the data folder:\n%s", upOut.String())
	}
	if fi, err := os.Stat(m[1]); err != nil || !fi.IsDir() {
		t.Errorf("data folder %s: %v", m[1], err)
	}
	defer func() {
		if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
			t.Errorf("data folder %s left behind: %v", m[1], err)
		}
	}()

	code, out, errOut := h.run("up")
	expectRun(t, "second up", code, out, errOut, ExitUsage, `playground "default" is already running (pid `,
		"stop it with: kraftlab down, or start another beside it: kraftlab up --session NAME")

	var followOut, followErr lockedBuffer
	followDone := make(chan int, 1)
	go func() {
		followDone <- run(ctx, []string{"events", "--follow"}, h.env(&followOut, &followErr))
	}()

	code, out, errOut = h.run("kill", "leader")
	expectRun(t, "kill leader", code, out, errOut, ExitOK, "killed node 1 (the leader of epoch 1)")
	code, out, errOut = h.run("wait", "new-leader", "--timeout", "5s")
	expectRun(t, "wait new-leader", code, out, errOut, ExitOK, "ok: leader 2 in epoch 2", "baseline epoch 1 (before kill of node 1)")
	waitFor(t, "the follower to see the kill", func() bool { return strings.Contains(followOut.String(), "killed node 1") })

	code, out, errOut = h.run("down")
	expectRun(t, "down", code, out, errOut, ExitOK, `playground "default" is down: its nodes are stopped and its folders removed`)
	// down returns once up has let go: no session folder, no data folder.
	for _, dir := range []string{filepath.Join(h.home, "default"), m[1]} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			ents, _ := os.ReadDir(dir)
			t.Errorf("down returned while %s is still there: %v %v", dir, err, ents)
		}
	}
	if code := exited(t, "up", upDone); code != ExitOK {
		t.Errorf("up exited %d: %s", code, upErr.String())
	}
	if code := exited(t, "events --follow", followDone); code != ExitOK {
		t.Errorf("events --follow exited %d when the playground went down: %s", code, followErr.String())
	}
	for _, want := range []string{
		`kraftlab playground "default" is up: 3 controllers, 1 brokers, profile fast`,
		"controllers  1=127.0.0.1:19001  2=127.0.0.1:19002  3=127.0.0.1:19003",
		"\n  quorum       pull (Kafka's KRaft: followers fetch; or up --quorum push)\n",
		"\n  brokers      101=127.0.0.1:19101\n",
		"\n  bootstrap    127.0.0.1:19101\n",
		"\n  kcat         kcat -b 127.0.0.1:19101 -L\n",
		"\n  control      " + filepath.Join(h.home, "default", "control.sock") + "\n",
		// Each command on a line of its own: pasting one runs it alone.
		"In another shell:\n  kraftlab status\n  kraftlab kill leader\n  kraftlab wait new-leader\n",
		"Stop with Ctrl-C or:\n  kraftlab down\n",
		"election", "killed node 1", `playground "default" is down`,
	} {
		if !strings.Contains(upOut.String(), want) {
			t.Errorf("up output lacks %q:\n%s", want, upOut.String())
		}
	}
	code, out, errOut = h.run("status")
	expectRun(t, "status after down", code, out, errOut, ExitUsage, "no playground running")
	checkBanner(t, upOut.String())
}

// checkBanner checks what up printed before its first event: one item a
// line within 80 columns (none wrap mid-word on a terminal of that
// width), and no | that would make a pasted line a pipe.
func checkBanner(t *testing.T, out string) {
	t.Helper()
	banner, _, _ := strings.Cut(out, "Stop with")
	for _, line := range strings.Split(banner, "\n") {
		if strings.Contains(line, "|") {
			t.Errorf("a banner line holds a |: %q", line)
		}
		if n := len([]rune(line)); n > bannerWidth {
			t.Errorf("a banner line of %d columns: %q", n, line)
		}
	}
}

func TestStatusMirrorsDescribe(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("status")
	expectRun(t, "status", code, out, errOut, ExitOK,
		"ClusterId:              kraftlab-test-cluster\n",
		"LeaderId:               1\n",
		"LeaderEpoch:            1\n",
		"MaxFollowerLag:         0\n",
		"MaxFollowerLagTimeMs:   0\n",
		`CurrentVoters:          [{"id": 1, "endpoints": ["CONTROLLER://127.0.0.1:19001"]}, {"id": 2, `,
		`CurrentObservers:       [{"id": 101}]`)
	if !regexp.MustCompile(`(?m)^HighWatermark:          \d+$`).MatchString(out) {
		t.Errorf("no HighWatermark line:\n%s", out)
	}

	code, out, errOut = h.run("status", "--json")
	expectRun(t, "status --json", code, out, errOut, ExitOK)
	var v view.View
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.LeaderID != 1 || len(v.CurrentVoters) != 3 {
		t.Errorf("status --json: %v %+v", err, v)
	}
	for _, name := range []string{`"clusterId"`, `"leaderEpoch"`, `"maxFollowerLagTimeMs"`, `"currentObservers"`, `"lastCaughtUpTimestamp"`} {
		if !strings.Contains(out, name) {
			t.Errorf("status --json lacks %s", name)
		}
	}

	code, out, errOut = h.run("status", "--replication")
	expectRun(t, "status --replication", code, out, errOut, ExitOK,
		"NodeId  DirectoryId             LogEndOffset  Lag  LastFetchTimestamp  LastCaughtUpTimestamp  Status    State\n",
		"\n1       AAAAAAAAAAAAAAAAAAAAAA  ")
	noTrailingSpaces(t, "status --replication", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[1], "1 ") || !strings.Contains(lines[1], "now") || !strings.Contains(lines[4], "Observer") {
		t.Errorf("replication rows (leader first, observers last):\n%s", out)
	}

	code, out, errOut = h.run("status", "--replication", "--json")
	expectRun(t, "status --replication --json", code, out, errOut, ExitOK)
	var rows []view.Replica
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 4 || rows[0].Status != "Leader" || rows[3].NodeID != 101 {
		t.Errorf("replication JSON: %v %+v", err, rows)
	}

	code, out, errOut = h.run("nodes")
	expectRun(t, "nodes", code, out, errOut, ExitOK,
		"NODE  KIND        LISTENER         STATE    ROLE      EPOCH  LEADER  VOTED  LOG-END  HWM",
		"101   broker      127.0.0.1:19101  running  Observer  1      1       -")
	noTrailingSpaces(t, "nodes", out)
	code, out, errOut = h.run("nodes", "--json")
	var nodes []view.Node
	if err := json.Unmarshal([]byte(out), &nodes); err != nil || len(nodes) != 4 || code != 0 {
		t.Errorf("nodes --json: %v %s", err, errOut)
	}

	// Without a leader, status says so instead of inventing numbers.
	h.run("kill", "2")
	h.run("kill", "3")
	code, out, errOut = h.run("status")
	expectRun(t, "status without leader", code, out, errOut, ExitOK, "LeaderId:               -1", "no leader (1 Resigned e1, 2 killed, 3 killed): an election may be in progress")
	code, out, errOut = h.run("status", "--replication")
	expectRun(t, "replication without leader", code, out, errOut, ExitOK, "only a leader knows how far the replicas are")
}

func TestActions(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	cases := []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"kill", "9"}, 2, []string{"kraftlab: unknown node 9 (nodes: 1, 2, 3, 101); list them with: kraftlab nodes"}},
		{[]string{"start", "2"}, 2, []string{"node 2 is already running"}},
		{[]string{"partition", "1", "1"}, 2, []string{"partition needs two different nodes, got 1 twice"}},
		{[]string{"kill", "old-leader"}, 2, []string{"no kill, stop, isolate, resign, wipe, disk or mark yet"}},
		{[]string{"partition", "1", "2", "--oneway"}, 0, []string{"partitioned 1 -> 2 (one way: what 1 sends 2 is dropped)"}},
		{[]string{"link", "leader", "3", "--delay", "200ms", "--jitter", "50ms", "--loss", "10%"}, 0, []string{"link 1 <-> 3: delay 200ms + up to 50ms jitter, loss 10%"}},
		{[]string{"heal", "3", "1"}, 0, []string{"healed 3 <-> 1"}},
		{[]string{"disk", "9", "--delay", "100ms"}, 2, []string{"kraftlab: unknown node 9 (nodes: 1, 2, 3, 101); list them with: kraftlab nodes"}},
		{[]string{"disk", "3", "--delay", "150ms"}, 0, []string{"node 3's disk is slow (Follower in epoch 1): every write and fsync of its logs takes 150ms longer"}},
		{[]string{"nodes"}, 0, []string{"running (disk +150ms)", "node 3's disk is slow: every write and fsync takes 150ms longer (undo: kraftlab disk 3 --delay 0)"}},
		{[]string{"expect", "node", "target", "state", "running"}, 0, []string{"ok: node 3 is Follower"}},
		{[]string{"disk", "3", "--delay", "0"}, 0, []string{"node 3's disk is normal again (every write and fsync took 150ms longer)"}},
		{[]string{"heal"}, 0, []string{"healed every link (1 had faults)"}},
		{[]string{"isolate", "3"}, 0, []string{"isolated node 3 (Follower in epoch 1): every link to and from it is down"}},
		{[]string{"expect", "node", "3", "state", "isolated"}, 0, []string{"ok: node 3 is Prospective"}},
		{[]string{"heal"}, 0, []string{"healed every link"}},
		{[]string{"snapshot", "leader"}, 0, []string{"node 1 took a snapshot ending at offset"}},
		{[]string{"resign"}, 0, []string{"node 1 resigned the leadership of epoch 1"}},
		{[]string{"stop", "old-leader"}, 0, []string{"stopped node 1 gracefully (Follower in epoch 2)"}},
		{[]string{"kill", "1"}, 2, []string{"node 1 is stopped, not running"}},
		{[]string{"start", "1", "--json"}, 0, []string{`"action": "start"`, `"message": "started node 1"`}},
	}
	for _, tc := range cases {
		code, out, errOut := h.run(tc.args...)
		expectRun(t, strings.Join(tc.args, " "), code, out, errOut, tc.code, tc.wants...)
	}
	code, out, errOut := h.run("events")
	expectRun(t, "events", code, out, errOut, ExitOK, "election", "link-change", "disk", "action-error", "resign", "stop")
	code, out, _ = h.run("events", "--json", "--after", "3")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first cluster.Event
	if code != 0 || json.Unmarshal([]byte(lines[0]), &first) != nil || first.Seq != 4 {
		t.Errorf("events --json --after 3: first %+v from %q", first, lines[0])
	}
}

func TestLoad(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{})
	code, out, errOut := h.run("load")
	expectRun(t, "load before any", code, out, errOut, ExitOK, "load off\n", "records committed 0, failed 0, skipped 0, in flight 0")
	code, out, errOut = h.run("load", "200")
	expectRun(t, "load 200", code, out, errOut, ExitOK, "load started: 200 rec/s of 100 B, appended on the leader")
	code, out, errOut = h.run("load")
	expectRun(t, "load", code, out, errOut, ExitOK, "load 200 rec/s of 100 B on node 1, started from the command line\n")
	code, out, errOut = h.run("status")
	expectRun(t, "status with load", code, out, errOut, ExitOK, "\nload 200 rec/s of 100 B on node 1; ")
	code, out, errOut = h.run("load", "500", "--size", "1KiB", "--json")
	expectRun(t, "load 500 --size 1KiB --json", code, out, errOut, ExitOK, `"action": "load"`, `"message": "load changed: 500 rec/s of 1.0 KiB (was 200 rec/s of 100 B)"`)
	code, out, _ = h.run("load", "--json")
	var l view.Load
	if err := json.Unmarshal([]byte(out), &l); err != nil || code != 0 || l.RecordsPerSec != 500 || l.RecordBytes != 1024 || l.NodeID != 1 {
		t.Errorf("load --json: %d %v %s", code, err, out)
	}
	code, out, errOut = h.run("load", "stop")
	expectRun(t, "load stop", code, out, errOut, ExitOK, "load stopped (")
	code, out, errOut = h.run("load", "0")
	expectRun(t, "load 0", code, out, errOut, ExitOK, "load is already off")
	code, out, errOut = h.run("events")
	expectRun(t, "events", code, out, errOut, ExitOK, "load started: 200 rec/s", "load stopped")
}

// A playground that takes connections but never answers makes commands
// fail with a hint once their deadline passes, never hang.
func TestSilentPlaygroundTimesOut(t *testing.T) {
	h := newHarness(t)
	s, err := control.NewSession(h.home, "default")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // read nothing, answer nothing
		}
	})
	for _, args := range [][]string{{"status"}, {"kill", "leader"}, {"load", "10"}, {"events"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		var out, errOut lockedBuffer
		code := run(ctx, args, h.env(&out, &errOut))
		cancel()
		expectRun(t, strings.Join(args, " "), code, out.String(), errOut.String(), ExitUsage,
			`playground "default" did not answer in time (context deadline exceeded); it may be stuck: look at the shell that runs kraftlab up`)
	}
}

func TestWaitAndExpect(t *testing.T) {
	h := newHarness(t)
	h.serve("default", clustertest.Options{ElectionDelay: 300 * time.Millisecond})
	code, out, errOut := h.run("expect", "new-leader")
	expectRun(t, "expect new-leader before any kill", code, out, errOut, ExitUsage, "expect new-leader: no baseline yet")
	code, out, errOut = h.run("wait", "node", "9", "role", "Leader")
	expectRun(t, "wait node 9", code, out, errOut, ExitUsage, "unknown node 9")

	h.run("kill", "leader")
	// The model elects 300ms after the kill: wait must poll until then.
	code, out, errOut = h.run("wait", "new-leader", "--timeout", "10s")
	expectRun(t, "wait new-leader", code, out, errOut, ExitOK, "ok: leader 2 in epoch 2")
	if m := regexp.MustCompile(`after (\d+)ms`).FindStringSubmatch(out); m == nil || len(m[1]) < 3 {
		t.Errorf("wait returned before the election: %q", out)
	}
	code, out, errOut = h.run("expect", "leader", "==", "1")
	expectRun(t, "expect leader == 1", code, out, errOut, ExitFailed, "kraftlab: expect leader == 1: false; saw: leader 2 in epoch 2")
	code, out, errOut = h.run("wait", "leader==1", "--timeout", "200ms")
	expectRun(t, "wait leader==1", code, out, errOut, ExitFailed, "kraftlab: wait leader == 1: still false after 200ms; last saw: leader 2 in epoch 2")
	code, out, _ = h.run("wait", "hwm >= baseline", "--json")
	var res checkResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.OK || res.Condition != "hwm >= baseline" {
		t.Errorf("wait --json: %d %q", code, out)
	}
	code, out, _ = h.run("expect", "epoch", "=", "2", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.OK || res.Condition != "epoch == 2" {
		t.Errorf("expect epoch = 2 --json: %d %q", code, out)
	}
	code, out, _ = h.run("expect", "leader", "!=", "2", "--json")
	if code != ExitFailed || json.Unmarshal([]byte(out), &res) != nil || res.OK {
		t.Errorf("failed expect --json: %d %q", code, out)
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScenarioRun(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	pass := writeFile(t, dir, "pass.txt", `# kill the leader, a new one takes over
up --controllers 3 --brokers 0 --profile workshop
wait leader
load 500 --size 64   # offsets move
kill leader          # the first leader
wait new-leader
expect leader != old-leader
status
load stop
`)
	fail := writeFile(t, dir, "fail.txt", "wait leader\n\nexpect leader == 3\nkill 2\n")
	code, out, errOut := h.run("scenario", "run", fail, "--profile", "fast")
	expectRun(t, "scenario run fail.txt", code, out, errOut, ExitFailed, "kraftlab: 1 of 1 scenario file failed\n")

	code, out, errOut = h.run("scenario", "run", pass, fail, "--profile", "fast")
	expectRun(t, "scenario run", code, out, errOut, ExitFailed,
		"=== "+pass+" (3 controllers, 0 brokers, profile fast, session scenario-",
		"wait leader  (",
		"ok: leader 1 in epoch 1",
		"killed node 1 (the leader of epoch 1)",
		"LeaderId:               2",
		"load started: 500 rec/s of 64 B",
		"load stopped (",
		"--- PASS "+pass,
		"=== "+fail+" (3 controllers, 3 brokers, profile fast",
		"--- FAIL "+fail+":3: expect leader == 3\n    expect leader == 3: false; saw: leader 1 in epoch 1",
		"kraftlab: 1 of 2 scenario files failed")
	if strings.Contains(out, "kill 2") {
		t.Errorf("the failing file went on after its failure:\n%s", out)
	}

	if left, _ := filepath.Glob(filepath.Join(h.home, "scenario-*")); len(left) > 0 {
		t.Errorf("scenario run left its session folders: %v", left)
	}
	code, out, _ = h.run("scenario", "run", "--json", pass, fail)
	var rep scenario.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("scenario --json: %v\n%s", err, out)
	}
	if code != ExitFailed || rep.OK || rep.ExitCode != 1 || len(rep.Files) != 2 || !rep.Files[0].OK ||
		rep.Files[1].Failure.Pos != fail+":3" || len(rep.Files[0].Steps) != 7 {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(rep.Files[0].Playground, "profile workshop") {
		t.Errorf("without --profile the up line's profile applies: %s", rep.Files[0].Playground)
	}
	if !strings.Contains(rep.Files[1].Playground, "profile fast") {
		t.Errorf("without up line or --profile scenarios run fast: %s", rep.Files[1].Playground)
	}
}

func TestScenarioSyntaxErrorsStopEverything(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	good := writeFile(t, dir, "good.txt", "wait leader\n")
	bad := writeFile(t, dir, "bad.txt", `up --controllers 3 --brokers x
wait leader
kil 3
wait leder
wait leader --timeout 10x
kill 3x
link 1 2 --loss 200%
down
events --follow
status --session other
scenario run x.txt
up --controllers 5
help
wait 'unterminated
load 10 --size 2MiB
bench quorum --sizes 256
bench quorum --quorum pull,push --observers 0 --writers 1
`)
	code, out, errOut := h.run("scenario", "run", good, bad)
	expectRun(t, "scenario run with errors", code, out, errOut, ExitUsage,
		bad+`:1: invalid argument "x" for "--brokers" flag`,
		bad+`:3: unknown command "kil"; did you mean kill?`,
		bad+`:4: bad condition "leder"`,
		bad+`:5: invalid argument "10x" for "--timeout" flag`,
		bad+`:6: bad node "3x"`,
		bad+`:7: invalid argument "200%" for "--loss" flag`,
		bad+":8: down cannot be a scenario line: a scenario's playground shuts down by itself",
		bad+":9: events --follow never ends, so it cannot be a scenario line",
		bad+":10: --session has no place in a scenario line",
		bad+":11: scenario run cannot be a scenario line: scenarios do not nest",
		bad+":12: up may only be the first command",
		bad+":13: help cannot be a scenario line",
		bad+":14: unterminated ' quote",
		bad+`:15: invalid argument "2MiB" for "--size" flag: must be between 16 B and 32 KiB`,
		bad+":16: bench quorum cannot be a scenario line: a benchmark runs its own quorums, apart from any playground",
		"kraftlab: nothing ran: 1 of 2 scenario files have problems (listed above)")
	if strings.Contains(out, "===") {
		t.Errorf("something ran:\n%s", out)
	}
	// The comparison of push and pull may be a line (a lesson's).
	if strings.Contains(errOut, ":17:") {
		t.Errorf("bench quorum --quorum refused as a scenario line:\n%s", errOut)
	}
	code, out, errOut = h.run("scenario", "check", good)
	expectRun(t, "scenario check", code, out, errOut, ExitOK, "1 scenario file is valid\n")

	// An up line's --set is checked against the profile the scenario will
	// run, fast unless the line names one: a fetch timeout of 1 s suits
	// the fast profile's 50 ms parked-fetch wait, not the workshop's 1 s.
	dir = t.TempDir()
	fast := writeFile(t, dir, "fast.txt", "up --controllers 3 --brokers 0 --set controller.quorum.fetch.timeout.ms=1000\nwait leader\n")
	code, out, errOut = h.run("scenario", "check", fast)
	expectRun(t, "scenario check of a fast up line", code, out, errOut, ExitOK, "1 scenario file is valid\n")
	workshop := writeFile(t, dir, "workshop.txt", "up --controllers 3 --brokers 0 --profile workshop --set controller.quorum.fetch.timeout.ms=1000\nwait leader\n")
	code, out, errOut = h.run("scenario", "check", workshop)
	expectRun(t, "scenario check of a workshop up line", code, out, errOut, ExitUsage, "kraftlab.quorum.fetch.max.wait.ms must be less than controller.quorum.fetch.timeout.ms")
}

// Every example parses and every line of it is a valid command;
// TestExamplesRun runs them against the real engine.
func TestExamplesAreValid(t *testing.T) {
	files, err := filepath.Glob("../examples/*.txt")
	if err != nil || len(files) < 6 {
		t.Fatalf("examples: %v %v", files, err)
	}
	h := newHarness(t)
	e := h.env(&lockedBuffer{}, &lockedBuffer{})
	for _, f := range files {
		s, err := scenario.Load(f, e.checkLine)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		b, _ := os.ReadFile(f)
		for _, want := range []string{"# What it teaches", "# What to watch"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks a %q section", f, want)
			}
		}
		if s.Up == nil || len(s.Steps) < 4 {
			t.Errorf("%s: want an up line and some steps", f)
		}
	}
}

func TestCompletion(t *testing.T) {
	h := newHarness(t)
	code, out, _ := h.run("__complete", "kill", "")
	if code != 0 || !strings.Contains(out, "leader\tthe current leader") ||
		!strings.Contains(out, `_activeHelp_ no node IDs: no playground running (session "default")`) {
		t.Errorf("completion without a playground: %q", out)
	}
	// The IDs come from the session the command line names, wherever
	// --session stands.
	h.serve("demo", clustertest.Options{})
	for _, args := range [][]string{{"__complete", "kill", "--session", "demo", ""}, {"__complete", "--session=demo", "partition", "1", ""}, {"__complete", "wait", "node", "--session", "demo", ""}} {
		if _, out, _ := h.run(args...); !strings.Contains(out, "\n2\tcontroller, running, Follower\n") || !strings.Contains(out, "\n101\tbroker") {
			t.Errorf("%v: %q", args, out)
		}
	}
	h.serve("default", clustertest.Options{})
	code, out, _ = h.run("__complete", "kill", "")
	if code != 0 || !strings.Contains(out, "101\tbroker, running, Observer") || !strings.Contains(out, "1\tcontroller, running, Leader") {
		t.Errorf("node completion: %q", out)
	}
	_, out, _ = h.run("__complete", "up", "--set", "controller.quorum.f")
	if !strings.Contains(out, "controller.quorum.fetch.timeout.ms=") || strings.Contains(out, "replica.") {
		t.Errorf("--set completion: %q", out)
	}
	_, out, _ = h.run("__complete", "wait", "node", "2", "role", "")
	if !strings.Contains(out, "Prospective") {
		t.Errorf("condition completion: %q", out)
	}
}

// Every example runs against the real engine with the fast profile, with
// the quorum replicating by pull (Kafka's) and by push (classic Raft): no
// example depends on pull (docs/design.md says which teach pull's way
// though they pass under push).
func TestExamplesRun(t *testing.T) {
	all, err := filepath.Glob("../examples/*.txt")
	if err != nil || len(all) == 0 {
		t.Fatalf("examples: %v %v", all, err)
	}
	// The zk-mode examples have no quorum to replicate either way, and
	// need ZooKeeper.
	var files, zk []string
	for _, f := range all {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nup --mode zk") {
			zk = append(zk, f)
		} else {
			files = append(files, f)
		}
	}
	t.Run("pull", func(t *testing.T) { runExamples(t, files) })
	// Voter changes need pull replication, as Kafka's quorum has.
	var push []string
	for _, f := range files {
		if b, _ := os.ReadFile(f); !strings.Contains(string(b), "\ncontrollers ") {
			push = append(push, f)
		}
	}
	t.Run("push", func(t *testing.T) { runExamples(t, push, "--set", "kraftlab.quorum.replication=push") })
	t.Run("zk", func(t *testing.T) {
		if _, err := zookeeper.Find(); err != nil {
			t.Skip(err)
		}
		if len(zk) == 0 {
			t.Fatal("no zk-mode example")
		}
		runExamples(t, zk)
	})
	// A scenario's up line names the mode itself.
	t.Run("up-line", func(t *testing.T) {
		f := writeFile(t, t.TempDir(), "push.txt", "up --controllers 3 --brokers 1 --quorum push\nwait leader\nkill leader\nwait new-leader\nwait caught-up\nstatus\n")
		rep := runExamples(t, []string{f})
		if steps := rep.Files[0].Steps; len(steps) == 0 || !strings.Contains(steps[len(steps)-1].Output, "Replication:            push") {
			t.Errorf("the up line's --quorum push did not reach the playground: %+v", steps)
		}
	})
}

// runExamples runs files in one scenario run on the real engine and fails
// t for each that fails.
func runExamples(t *testing.T, files []string, flags ...string) scenario.Report {
	h := newHarness(t)
	var out, errOut lockedBuffer
	e := h.env(&out, &errOut)
	e.open = engine.Open
	args := append([]string{"scenario", "run", "--json", "--profile", string(cluster.ProfileFast)}, flags...)
	code := run(testContext(t), append(args, files...), e)
	var rep scenario.Report
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("scenario run --json: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	if len(rep.Files) != len(files) {
		t.Fatalf("ran %d files of %d: %s", len(rep.Files), len(files), errOut.String())
	}
	for _, f := range rep.Files {
		if !f.OK {
			var last string
			if n := len(f.Steps); n > 0 {
				last = f.Steps[n-1].Output
			}
			t.Errorf("%s: %s\n%s", f.Failure.Pos, f.Failure.Message, last)
		}
	}
	if code != ExitOK && !t.Failed() {
		t.Errorf("scenario run exited %d: %s", code, errOut.String())
	}
	return rep
}

func noTrailingSpaces(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimRight(line, " ") != line {
			t.Errorf("%s: trailing spaces in %q", what, line)
		}
	}
}

// --session shows only where it picks a playground.
func TestSessionFlagOnlyWhereItMatters(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{{"bench", "--help"}, {"bench", "quorum", "--help"}, {"completion", "--help"}, {"completion", "bash", "--help"}, {"help", "--help"}} {
		if _, out, _ := h.run(args...); strings.Contains(out, "--session") {
			t.Errorf("%v shows --session:\n%s", args, out)
		}
	}
	for _, args := range [][]string{{"status", "--help"}, {"scenario", "run", "--help"}, {"up", "--help"}} {
		if _, out, _ := h.run(args...); !strings.Contains(out, "--session") {
			t.Errorf("%v lacks --session:\n%s", args, out)
		}
	}
}

func TestLinkHelpExplainsTheFlapping(t *testing.T) {
	h := newHarness(t)
	_, out, _ := h.run("link", "--help")
	for _, want := range []string{"flaps between Follower and Prospective", "controller.quorum.request.timeout.ms", "controller.quorum.fetch.timeout.ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("link --help lacks %q", want)
		}
	}
}

// up --log-file appends every node's server log, each line naming its
// node: the leader's election, the broker's registration.
func TestUpLogFile(t *testing.T) {
	h := newHarness(t)
	var upOut, upErr lockedBuffer
	e := h.env(&upOut, &upErr)
	e.open = engine.Open
	logFile := filepath.Join(t.TempDir(), "server.log")
	upDone := make(chan int, 1)
	go func() {
		upDone <- run(testContext(t), []string{"up", "--headless", "--profile", "fast", "--controllers", "1", "--brokers", "1", "--log-file", logFile}, e)
	}()
	waitFor(t, "the leader's election and the broker's registration in the server log", func() bool {
		b, _ := os.ReadFile(logFile)
		return regexp.MustCompile(`msg=leader node=1 `).Match(b) && regexp.MustCompile(`msg=registered node=101 `).Match(b)
	})
	code, out, errOut := h.run("down")
	expectRun(t, "down", code, out, errOut, ExitOK, "is down")
	if code := exited(t, "up", upDone); code != ExitOK {
		t.Errorf("up exited %d: %s", code, upErr.String())
	}

	code, out, errOut = h.run("up", "--log-file", filepath.Join(t.TempDir(), "no", "such", "folder", "server.log"))
	expectRun(t, "up with a log file it cannot open", code, out, errOut, ExitUsage, "log file: open ")
}

// up --quorum push reaches the playground's settings, and the banner and
// status say so; a pull playground's status keeps to Kafka's rows.
func TestUpQuorumPush(t *testing.T) {
	h := newHarness(t)
	var upOut, upErr lockedBuffer
	upDone := make(chan int, 1)
	ctx := testContext(t)
	go func() {
		upDone <- run(ctx, []string{"up", "--headless", "--profile", "fast", "--brokers", "1", "--quorum", "push", "--session", "push"}, h.env(&upOut, &upErr))
	}()
	waitFor(t, "up to serve", func() bool { code, _, _ := h.run("status", "--session", "push"); return code == 0 })
	waitFor(t, "the banner", func() bool { return strings.Contains(upOut.String(), "Stop with") })
	if want := "\n  quorum       push (classic Raft: the leader sends AppendEntries)\n"; !strings.Contains(upOut.String(), want) {
		t.Errorf("the banner lacks %q:\n%s", want, upOut.String())
	}
	checkBanner(t, upOut.String())
	code, out, errOut := h.run("status", "--session", "push")
	expectRun(t, "status", code, out, errOut, ExitOK,
		"Replication:            push (classic Raft: the leader sends AppendEntries; Kafka's KRaft pulls)\n")
	code, out, errOut = h.run("status", "--session", "push", "--json")
	expectRun(t, "status --json", code, out, errOut, ExitOK, `"kraftlab.quorum.replication": "push"`)
	code, out, errOut = h.run("down", "--session", "push")
	expectRun(t, "down", code, out, errOut, ExitOK)
	if code := exited(t, "up", upDone); code != ExitOK {
		t.Errorf("up exited %d: %s", code, upErr.String())
	}

	h.serve("default", clustertest.Options{})
	code, out, errOut = h.run("status")
	expectRun(t, "status of a pull playground", code, out, errOut, ExitOK)
	if strings.Contains(out, "Replication") {
		t.Errorf("a pull playground's status names its replication:\n%s", out)
	}
}
