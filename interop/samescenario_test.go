package interop

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/kraftlab/kraftlab/internal/poll"
)

// sameTimings are the configs both systems take, by Kafka's names: on top
// of Kafka's defaults (kraftlab runs its kafka profile, whose quorum
// timing is Kafka's: fetch timeout 2 s, election timeout 1 s, NoOpRecord
// every 500 ms), brokers heartbeat every second and are fenced after 4 s,
// and a follower leaves the ISR after 5 s, so that fencing and ISR changes
// come within seconds on both.
var sameTimings = []string{
	"broker.session.timeout.ms=4000",
	"broker.heartbeat.interval.ms=1000",
	"replica.lag.time.max.ms=5000",
}

// kafkaSnapshots make Kafka's nodes snapshot every second and let their
// cleaner forget a snapshot (and the log below the next one) a second
// after its last record; kraftlab moves the log start when it snapshots
// (docs/design.md, "Differences from Kafka"), so `kraftlab snapshot` does
// the same at once.
var kafkaSnapshots = []string{
	"metadata.log.max.snapshot.interval.ms=1000",
	"metadata.max.retention.ms=1000",
}

// fact is one comparable thing a tool or a file said at a step, phrased
// relative to the scenario's start ("L0", "E0+1", "grew"), so that two
// clusters whose ids and offsets differ by chance agree on it. An info
// fact is printed but not compared (a timing).
type fact struct {
	key, value string
	// notCompared says why the fact is only printed (a timing, an order
	// that carries nothing); empty for a compared fact.
	notCompared string
}

// run is one system's side of the scenarios.
type run struct {
	sys System
	k   *Kafka
	// labels name nodes by their part in the scenario (L0 the leader at
	// its start, L1 the next one, P0 the partition's first leader).
	labels map[int32]string
	// epoch0 is the quorum's epoch at the scenario's start, epoch1 the
	// one its next leader won (0 before): after a kill two followers time
	// out together and may split their first vote, so how far the epoch
	// moved is printed, not compared.
	epoch0, epoch1 int32
	// fEnd is the log end offset of the follower F when it was killed.
	fEnd     int64
	lastHWM  int64 // at the last describe --status of this scenario, -1 before it
	steps    map[string][]fact
	toolLogs []string
	retried  int // tool runs that failed once, this step
	mu       sync.Mutex
}

func (r *run) label(id int32) string {
	if id < 0 {
		return "none"
	}
	if l, ok := r.labels[id]; ok {
		return l
	}
	if slices.Contains(r.sys.Controllers(), id) {
		return "other voter"
	}
	return strconv.Itoa(int(id)) // brokers keep their ids: 101, 102 on both
}

func (r *run) labelsOf(ids []int32) string {
	var ls []string
	for _, id := range ids {
		ls = append(ls, r.label(id))
	}
	return strings.Join(ls, ",")
}

func (r *run) sortedLabels(ids []int32) string {
	var ls []string
	for _, id := range ids {
		ls = append(ls, r.label(id))
	}
	slices.Sort(ls)
	return strings.Join(ls, ",")
}

func (r *run) epoch(e int64) string {
	switch d := e - int64(r.epoch0); {
	case d == 0:
		return "E0"
	case d == 1 && e == int64(r.epoch1):
		return epochBoth // one election, no split vote
	case r.epoch1 != 0 && e == int64(r.epoch1):
		return "E1"
	case d > 0:
		return fmt.Sprintf("E0+%d", d)
	default:
		return fmt.Sprintf("E0%d", d)
	}
}

// tool runs one of Kafka's tools against the system's lowest running
// broker and keeps its output for the log.
func (r *run) tool(ctx context.Context, main string, args ...string) (string, error) {
	_, boot, err := runningBroker(r.sys)
	if err != nil {
		return "", err
	}
	if main == MainCluster { // its sub-command comes first
		args = append([]string{args[0], "--bootstrap-server", boot}, args[1:]...)
	} else {
		args = append([]string{"--bootstrap-server", boot}, args...)
	}
	res := r.k.Run(ctx, 90*time.Second, main, args...)
	r.logTool(res)
	if res.Err != nil && !slices.Contains(args, "--create") && !slices.Contains(args, "--execute") && !slices.Contains(args, "--election-type") {
		// Right after an election a broker may still forward to the old
		// controller: a read is tried once more, and the retry is printed
		// (the tool log says what failed). What changes the cluster is
		// not.
		r.mu.Lock()
		r.retried++
		r.mu.Unlock()
		time.Sleep(time.Second)
		res = r.k.Run(ctx, 90*time.Second, main, args...)
		r.logTool(res)
	}
	if res.Err != nil {
		return res.Stdout, fmt.Errorf("%s: %v: %s", strings.Join(res.Args, " "), res.Err, lastLines(res.Stdout+res.Stderr, 5))
	}
	return res.Stdout, nil
}

func (r *run) logTool(res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.toolLogs = append(r.toolLogs, fmt.Sprintf("[%s] $ %s (%.1fs, %v)\n%s%s", r.sys.Name(), strings.Join(res.Args, " "), res.Took.Seconds(), res.Err, indent(res.Stdout), indent(res.Stderr)))
}

// observer reads one thing of a system at a step.
type observer func(ctx context.Context, r *run) ([]fact, error)

// quorumStatus is `kafka-metadata-quorum describe --status`: who leads,
// in which epoch, whether the high watermark grew since the last look,
// and the voters and observers.
func quorumStatus(ctx context.Context, r *run) ([]fact, error) {
	out, err := r.tool(ctx, MainMetadataQuorum, "describe", "--status")
	if err != nil {
		return nil, err
	}
	_, v := ParseStatus(out)
	leader, ok1 := atoi(v["LeaderId"])
	epoch, ok2 := atoi(v["LeaderEpoch"])
	hwm, ok3 := atoi(v["HighWatermark"])
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("describe --status: no LeaderId, LeaderEpoch or HighWatermark in %q", out)
	}
	moved := "grew"
	switch {
	case r.lastHWM < 0:
		moved = "first look" // a scenario's first read: nothing to compare with yet
	case hwm == r.lastHWM:
		moved = "same"
	case hwm < r.lastHWM:
		moved = "fell"
	}
	r.lastHWM = hwm
	facts := []fact{
		{key: "quorum leader", value: r.label(int32(leader))},
		{key: "quorum epoch", value: r.epoch(epoch)},
		{key: "high watermark", value: moved},
	}
	for _, key := range []string{"CurrentVoters", "CurrentObservers"} {
		var nodes []quorumNode
		if err := json.Unmarshal([]byte(v[key]), &nodes); err != nil {
			return nil, fmt.Errorf("describe --status %s: %w", key, err)
		}
		var ids []int32
		for _, n := range nodes {
			ids = append(ids, n.ID)
		}
		facts = append(facts, fact{key: key, value: r.sortedLabels(ids)})
	}
	return facts, nil
}

// quorumReplication is `kafka-metadata-quorum describe --replication`:
// every replica's status and whether it is caught up (lag at most 5, a
// few NoOpRecords) or behind.
func quorumReplication(ctx context.Context, r *run) ([]fact, error) {
	out, err := r.tool(ctx, MainMetadataQuorum, "describe", "--replication")
	if err != nil {
		return nil, err
	}
	_, rows := ParseTable(out)
	var facts []fact
	for _, row := range rows {
		id, ok1 := atoi(row["NodeId"])
		lag, ok2 := atoi(row["Lag"])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("describe --replication: row %v", row)
		}
		pos := "lag 0"
		switch {
		case lag <= 5 && r.sys.Running(int32(id)):
			pos = "caught up"
		case lag > 0:
			pos = "behind"
		}
		facts = append(facts, fact{key: "replica " + r.label(int32(id)), value: row["Status"] + ", " + pos})
	}
	slices.SortFunc(facts, func(a, b fact) int { return strings.Compare(a.key, b.key) })
	return facts, nil
}

// quorumState reads the quorum-state file of the node the label names.
func quorumState(label string) observer { return readQuorumState(label, "") }

// quorumStateVoteUncompared is quorumState for a node whose vote in the
// current epoch was cast before the scenario began (which follower
// granted it depends on the earlier scenarios' random elections): its
// votedId is printed, not compared.
func quorumStateVoteUncompared(label string) observer {
	return readQuorumState(label, "vote cast in an earlier scenario")
}

// quorumStateResigned is quorumState for a leader that gave up leading
// (check-quorum): Kafka's Resigned state keeps leaderId itself in its
// epoch, and once its election timeout passes it goes Unattached in the
// next epoch without a leader (KafkaRaftClient.pollResigned). Which of
// the two a read finds is timing, so both read as one value.
func quorumStateResigned(label string) observer {
	read := readQuorumState(label, "")
	return func(ctx context.Context, r *run) ([]fact, error) {
		facts, err := read(ctx, r)
		if err != nil || len(facts) == 0 {
			return facts, err
		}
		id, _ := r.idOf(label)
		q, err := ReadQuorumStateFile(r.sys.QuorumStateFile(id))
		if err != nil {
			return nil, err
		}
		e0 := int64(r.epoch0)
		if int64(q.LeaderEpoch) == e0 && q.LeaderID == id || int64(q.LeaderEpoch) == e0+1 && q.LeaderID < 0 {
			facts[0].value = "resigned: itself in E0, or none in E0+1 after its election timeout"
		}
		return facts, nil
	}
}

func readQuorumState(label, voteNotCompared string) observer {
	return func(_ context.Context, r *run) ([]fact, error) {
		id, ok := r.idOf(label)
		if !ok {
			return nil, fmt.Errorf("no node is %s", label)
		}
		q, err := ReadQuorumStateFile(r.sys.QuorumStateFile(id))
		if err != nil {
			return nil, err
		}
		return []fact{
			{key: "quorum-state " + label, value: fmt.Sprintf("leaderId %s, leaderEpoch %s", r.label(q.LeaderID), r.epoch(int64(q.LeaderEpoch)))},
			{key: "quorum-state " + label + " votedId", value: r.label(q.VotedID), notCompared: voteNotCompared},
			{key: "quorum-state keys", value: strings.Join(q.Keys, ",")},
		}, nil
	}
}

// endpoints is `kafka-cluster list-endpoints --include-fenced-brokers`:
// every registered broker and its fencing.
func endpoints(ctx context.Context, r *run) ([]fact, error) {
	out, err := r.tool(ctx, MainCluster, "list-endpoints", "--include-fenced-brokers")
	if err != nil {
		return nil, err
	}
	_, rows := ParseTable(out)
	var facts []fact
	for _, row := range rows {
		id, _ := atoi(row["ID"])
		facts = append(facts, fact{key: "broker " + r.label(int32(id)), value: row["STATE"]})
	}
	return facts, nil
}

// topicDescribe is `kafka-topics --describe --topic`: partition 0's
// leader, replicas and ISR, in the order printed.
func topicDescribe(topic string) observer {
	return func(ctx context.Context, r *run) ([]fact, error) {
		out, err := r.tool(ctx, MainTopics, "--describe", "--topic", topic)
		if err != nil {
			return nil, err
		}
		ts := ParseTopicsDescribe(out)
		if len(ts) != 1 || len(ts[0].Partitions) != 1 {
			return nil, fmt.Errorf("kafka-topics --describe %s: %q", topic, out)
		}
		p := ts[0].Partitions[0]
		return []fact{
			{key: "partition leader", value: r.label(p.Leader)},
			{key: "replicas", value: r.labelsOf(p.Replicas)},
			{key: "isr", value: r.sortedLabels(p.Isr)},
			{key: "isr as printed", value: r.labelsOf(p.Isr)},
		}, nil
	}
}

func (r *run) idOf(label string) (int32, bool) {
	for id, l := range r.labels {
		if l == label {
			return id, true
		}
	}
	return 0, false
}

// lockstep runs each step of a scenario on both systems before the next:
// the action on both, then each one's wait, then the same tools on both at
// once, so one system's waits overlap the other's.
type lockstep struct {
	t        *testing.T
	ctx      context.Context
	scenario string
	runs     []*run
	order    []string // steps in order
}

// each runs an action on both systems at once (a clean stop takes
// seconds) and returns when each began; it fails the test if one fails.
func (l *lockstep) each(f func(r *run) error) []time.Time {
	l.t.Helper()
	began := make([]time.Time, len(l.runs))
	errs := make([]error, len(l.runs))
	var wg sync.WaitGroup
	for i, r := range l.runs {
		wg.Go(func() { began[i] = time.Now(); errs[i] = f(r) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			l.t.Fatalf("%s on %s: %v", l.scenario, l.runs[i].sys.Name(), err)
		}
	}
	return began
}

// eachAsync starts an action on both systems, like each, but returns at
// once with when each began and a func that waits for both and fails the
// test if one failed: a clean stop takes seconds, and what it changes is
// watched meanwhile.
func (l *lockstep) eachAsync(f func(r *run) error) ([]time.Time, func()) {
	began := make([]time.Time, len(l.runs))
	errs := make([]error, len(l.runs))
	var wg sync.WaitGroup
	for i, r := range l.runs {
		began[i] = time.Now()
		wg.Go(func() { errs[i] = f(r) })
	}
	return began, func() {
		l.t.Helper()
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				l.t.Fatalf("%s on %s: %v", l.scenario, l.runs[i].sys.Name(), err)
			}
		}
	}
}

// wait polls cond on every system (all in one loop, at most every 100 ms:
// each look is a request) until it holds on all, and returns when it first
// held on each; it fails the test after timeout.
func (l *lockstep) wait(what string, timeout time.Duration, cond func(r *run) (bool, string)) []time.Time {
	l.t.Helper()
	start := time.Now()
	held := make([]time.Time, len(l.runs))
	last := make([]string, len(l.runs))
	next := time.Time{}
	poll.Until(l.t, timeout, fmt.Sprintf("%s: %s", l.scenario, what), func() bool {
		if time.Now().Before(next) {
			return false
		}
		next = time.Now().Add(100 * time.Millisecond)
		all := true
		for i, r := range l.runs {
			if !held[i].IsZero() {
				continue
			}
			ok, s := cond(r)
			last[i] = s
			if ok {
				held[i] = time.Now()
			} else {
				all = false
			}
		}
		return all
	}, func() string {
		var b strings.Builder
		for i, r := range l.runs {
			fmt.Fprintf(&b, "%s last seen: %s\n", r.sys.Name(), last[i])
		}
		return b.String()
	})
	for i, r := range l.runs {
		l.t.Logf("%s: %s on %s after %.1fs (%s)", l.scenario, what, r.sys.Name(), held[i].Sub(start).Seconds(), last[i])
	}
	return held
}

// observe runs the observers on both systems at once and records what
// they said under step.
func (l *lockstep) observe(step string, obs ...observer) {
	l.t.Helper()
	l.order = append(l.order, step)
	errs := make([]error, len(l.runs))
	var wg sync.WaitGroup
	for i, r := range l.runs {
		wg.Go(func() {
			for _, o := range obs {
				fs, err := o(l.ctx, r)
				if err != nil {
					errs[i] = err
					return
				}
				r.steps[step] = append(r.steps[step], fs...)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			l.t.Fatalf("%s, step %q on %s: %v", l.scenario, step, l.runs[i].sys.Name(), err)
		}
	}
	for _, r := range l.runs {
		if r.retried > 0 {
			r.steps[step] = append(r.steps[step], fact{key: "tool runs retried", value: strconv.Itoa(r.retried), notCompared: "a failed read, tried again"})
			r.retried = 0
		}
	}
}

// note records an info fact (printed, not compared) on one run.
func (r *run) note(step, key, value string) {
	r.steps[step] = append(r.steps[step], fact{key: key, value: value, notCompared: "timing"})
}

// knownDifference is a line of testdata/samescenario-known.tsv: a fact
// where kraftlab and Kafka differ on purpose or by a bug written down,
// and the row of docs/design.md's "Differences from Kafka" table (its
// first cell's start) that says why.
type knownDifference struct {
	scenario, step, key, kraftlab, kafka, row string
}

func readKnownDifferences(t *testing.T) []knownDifference {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "samescenario-known.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	design, err := os.ReadFile(filepath.Join("..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	var known []knownDifference
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 6 {
			t.Fatalf("samescenario-known.tsv:%d: %d tab-separated fields, want 6", n, len(c))
		}
		if !strings.Contains(string(design), "\n| "+c[5]) {
			t.Errorf("samescenario-known.tsv:%d: docs/design.md has no table row starting %q", n, c[5])
		}
		known = append(known, knownDifference{c[0], c[1], c[2], c[3], c[4], c[5]})
	}
	return known
}

// compare prints the step-by-step table of both systems' facts and fails
// the test on every difference the known list does not name.
func (l *lockstep) compare(known []knownDifference) {
	l.t.Helper()
	table, unexpected := compareSteps(l.scenario, l.order, l.runs[0].steps, l.runs[1].steps, known)
	l.t.Logf("%s, step by step:\n%s", l.scenario, table)
	for _, u := range unexpected {
		l.t.Errorf("unexpected difference (fix it, or add it to testdata/samescenario-known.tsv with its docs/design.md row):\n%s", u)
	}
}

// compareSteps lays kraftlab's and Kafka's facts side by side, step by
// step in order, and returns the table and every difference not known,
// each as a line of samescenario-known.tsv without its row.
func compareSteps(scenario string, order []string, kraftlab, kafka map[string][]fact, known []knownDifference) (table string, unexpected []string) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 2, 2, ' ', 0)
	fmt.Fprintf(w, "step\tfact\tkraftlab\tkafka\t\n")
	for _, step := range order {
		kl, kf := kraftlab[step], kafka[step]
		var keys []string
		for _, f := range append(slices.Clone(kl), kf...) {
			if !slices.Contains(keys, f.key) {
				keys = append(keys, f.key)
			}
		}
		shown := step // the step's name heads its first row only
		for _, key := range keys {
			a, aok := findFact(kl, key)
			k, kok := findFact(kf, key)
			verdict := "same"
			switch {
			case a.notCompared != "" || k.notCompared != "":
				verdict = "(not compared: " + cmp.Or(a.notCompared, k.notCompared) + ")"
			case aok && kok && sameValue(a.value, k.value):
			default:
				if !aok {
					a.value = "-"
				}
				if !kok {
					k.value = "-"
				}
				i := slices.IndexFunc(known, func(d knownDifference) bool {
					return d.scenario == scenario && d.step == step && d.key == key && d.kraftlab == a.value && d.kafka == k.value
				})
				if i >= 0 {
					verdict = "KNOWN: " + known[i].row
				} else {
					verdict = "DIFFERENT"
					unexpected = append(unexpected, strings.Join([]string{scenario, step, key, a.value, k.value}, "\t"))
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", shown, key, a.value, k.value, verdict)
			shown = ""
		}
	}
	w.Flush()
	return b.String(), unexpected
}

// epochBoth is an epoch that is both E1 (the next leader's) and E0+1:
// it matches either.
const epochBoth = "E1=E0+1"

// sameValue compares two facts' values, epochBoth matching E1 or E0+1.
func sameValue(a, b string) bool {
	for _, x := range epochVariants(a) {
		if slices.Contains(epochVariants(b), x) {
			return true
		}
	}
	return false
}

func epochVariants(v string) []string {
	if !strings.Contains(v, epochBoth) {
		return []string{v}
	}
	return []string{strings.ReplaceAll(v, epochBoth, "E1"), strings.ReplaceAll(v, epochBoth, "E0+1")}
}

func findFact(fs []fact, key string) (fact, bool) {
	for _, f := range fs {
		if f.key == key {
			return f, true
		}
	}
	return fact{}, false
}

// observeLeader polls the leader's DescribeQuorum answer.
func observeLeader(r *run) (QuorumLeader, string) {
	q, err := DescribeQuorumLeader(r.sys)
	if err != nil {
		return q, err.Error()
	}
	return q, fmt.Sprintf("leader %d epoch %d hwm %d", q.Leader, q.Epoch, q.HighWatermark)
}

// begin starts a scenario on both systems: it waits for a leader whose
// epoch no longer moves and names it L0.
func (l *lockstep) begin() {
	l.t.Helper()
	l.wait("a quorum leader", time.Minute, func(r *run) (bool, string) {
		q, s := observeLeader(r)
		return q.Leader > 0, s
	})
	for _, r := range l.runs {
		q, _ := observeLeader(r)
		r.labels = map[int32]string{q.Leader: "L0"}
		r.epoch0, r.epoch1 = q.Epoch, 0
		r.lastHWM = -1
		r.steps = map[string][]fact{}
	}
}

// newLeader waits until a voter other than L0 leads, names it L1 and
// notes under step how long it took from began and how far the epoch
// moved.
func (l *lockstep) newLeader(timeout time.Duration, step string, began []time.Time) {
	l.t.Helper()
	held := l.wait("a new quorum leader", timeout, func(r *run) (bool, string) {
		q, s := observeLeader(r)
		return q.Leader > 0 && r.label(q.Leader) != "L0", s
	})
	for _, r := range l.runs {
		q, _ := observeLeader(r)
		r.labels[q.Leader] = "L1"
		r.epoch1 = q.Epoch
	}
	for i, r := range l.runs {
		r.note(step, "to new leader", fmt.Sprintf("%.1fs", held[i].Sub(began[i]).Seconds()))
		r.note(step, "E1 - E0", fmt.Sprintf("+%d", r.epoch1-r.epoch0))
	}
}

// caughtUp waits until the quorum leader sees node label caught up.
func (l *lockstep) caughtUp(label string, timeout time.Duration) {
	l.t.Helper()
	l.wait(label+" caught up", timeout, func(r *run) (bool, string) {
		id, _ := r.idOf(label)
		q, err := DescribeQuorum(r.sys.Addr(mustLeader(r)))
		if err != nil || len(q.Topics) != 1 || len(q.Topics[0].Partitions) != 1 {
			return false, fmt.Sprint(err)
		}
		p := q.Topics[0].Partitions[0]
		for _, v := range p.CurrentVoters {
			if v.ReplicaID == id {
				return v.LogEndOffset >= p.HighWatermark-5 && v.LogEndOffset > 0, fmt.Sprintf("%s at %d, hwm %d", label, v.LogEndOffset, p.HighWatermark)
			}
		}
		return false, fmt.Sprintf("%s not among the voters", label)
	})
}

func mustLeader(r *run) int32 {
	q, _ := observeLeader(r)
	return q.Leader
}

// The scenarios, each a lockstep over both systems, in the order they
// run on the shared clusters; each leaves every node running.

func leaderKill(l *lockstep) {
	l.begin()
	l.observe("start", quorumStatus)
	killed := l.each(func(r *run) error { id, _ := r.idOf("L0"); return r.sys.Kill(l.ctx, id) })
	l.newLeader(30*time.Second, "L0 killed", killed)
	l.observe("L0 killed", quorumStatus, quorumReplication, quorumState("L0"), quorumState("L1"))
	l.each(func(r *run) error { id, _ := r.idOf("L0"); return r.sys.Start(l.ctx, id) })
	l.caughtUp("L0", time.Minute)
	l.observe("L0 restarted", quorumStatus, quorumReplication, quorumState("L0"))
}

func gracefulResignation(l *lockstep) {
	l.begin()
	l.observe("start", quorumStatus)
	stopped, done := l.eachAsync(func(r *run) error { id, _ := r.idOf("L0"); return r.sys.Stop(l.ctx, id) })
	l.newLeader(30*time.Second, "L0 stopped", stopped)
	done()
	l.observe("L0 stopped", quorumStatus, quorumReplication, quorumState("L0"))
	l.each(func(r *run) error { id, _ := r.idOf("L0"); return r.sys.Start(l.ctx, id) })
	l.caughtUp("L0", time.Minute)
	l.observe("L0 restarted", quorumStatus, quorumState("L0"))
}

func fenced(r *run, id int32) (bool, string) {
	f, err := BrokerFencing(r.sys)
	if err != nil {
		return false, err.Error()
	}
	v, ok := f[id]
	return ok && v, fmt.Sprint(f)
}

func brokerFenced(l *lockstep) {
	l.begin()
	l.observe("start", endpoints)
	killed := l.each(func(r *run) error { return r.sys.Kill(l.ctx, 102) })
	held := l.wait("broker 102 fenced", 30*time.Second, func(r *run) (bool, string) { return fenced(r, 102) })
	for i, r := range l.runs {
		r.note("102 killed", "kill to fenced", fmt.Sprintf("%.1fs", held[i].Sub(killed[i]).Seconds()))
	}
	l.observe("102 killed", endpoints, quorumReplication)
	l.each(func(r *run) error { return r.sys.Start(l.ctx, 102) })
	l.wait("broker 102 unfenced", time.Minute, func(r *run) (bool, string) {
		f, s := fenced(r, 102)
		return !f && strings.Contains(s, "102:false"), s
	})
	l.observe("102 restarted", endpoints)
}

// createPartition creates topic with one partition of two replicas on
// both systems, waits for its ISR of two and names its leader P0 and its
// follower P1.
func (l *lockstep) createPartition(topic string) {
	l.t.Helper()
	l.each(func(r *run) error {
		_, err := r.tool(l.ctx, MainTopics, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "2")
		return err
	})
	l.wait("ISR of 2", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && p.Leader > 0 && len(p.Isr) == 2, fmt.Sprint(p, err)
	})
	for _, r := range l.runs {
		p, _ := PartitionLeader(r.sys, topic)
		r.labels[p.Leader] = "P0"
		for _, id := range p.Replicas {
			if id != p.Leader {
				r.labels[id] = "P1"
			}
		}
	}
}

func partitionLeaderKill(l *lockstep) {
	const topic = "orders"
	l.begin()
	l.createPartition(topic)
	l.observe("created", topicDescribe(topic))
	killed := l.each(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Kill(l.ctx, id) })
	held := l.wait("a new partition leader", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && p.Leader > 0 && r.label(p.Leader) != "P0", fmt.Sprint(p, err)
	})
	for i, r := range l.runs {
		r.note("P0 killed", "kill to new partition leader", fmt.Sprintf("%.1fs", held[i].Sub(killed[i]).Seconds()))
	}
	l.observe("P0 killed", topicDescribe(topic), endpoints)
	l.each(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Start(l.ctx, id) })
	l.wait("P0 back in the ISR", time.Minute, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && len(p.Isr) == 2, fmt.Sprint(p, err)
	})
	l.observe("P0 restarted", topicDescribe(topic), endpoints)
}

// partitionLeaderStopped stops the partition leader's broker cleanly:
// its controlled shutdown (BrokerHeartbeat WantShutDown) should move the
// leadership before it goes, then the broker is fenced.
func partitionLeaderStopped(l *lockstep) {
	const topic = "payments"
	l.begin()
	l.createPartition(topic)
	l.observe("created", topicDescribe(topic))
	stopped, done := l.eachAsync(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Stop(l.ctx, id) })
	moved := l.wait("a new partition leader", 30*time.Second, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && p.Leader > 0 && r.label(p.Leader) != "P0", fmt.Sprint(p, err)
	})
	fencedAt := l.wait("P0 fenced", 30*time.Second, func(r *run) (bool, string) { id, _ := r.idOf("P0"); return fenced(r, id) })
	done()
	for i, r := range l.runs {
		r.note("P0 stopped", "stop to new partition leader", fmt.Sprintf("%.1fs", moved[i].Sub(stopped[i]).Seconds()))
		r.note("P0 stopped", "stop to P0 fenced", fmt.Sprintf("%.1fs", fencedAt[i].Sub(stopped[i]).Seconds()))
	}
	l.observe("P0 stopped", topicDescribe(topic), endpoints)
	l.each(func(r *run) error { id, _ := r.idOf("P0"); return r.sys.Start(l.ctx, id) })
	l.wait("P0 back in the ISR", time.Minute, func(r *run) (bool, string) {
		p, err := PartitionLeader(r.sys, topic)
		return err == nil && len(p.Isr) == 2, fmt.Sprint(p, err)
	})
	l.wait("P0 unfenced", time.Minute, func(r *run) (bool, string) {
		id, _ := r.idOf("P0")
		f, s := fenced(r, id)
		return !f && strings.Contains(s, strconv.Itoa(int(id))+":false"), s
	})
	l.observe("P0 restarted", topicDescribe(topic), endpoints)
}

// leaderView is controller label's own DescribeQuorum answer, asked of it
// directly (the harness's connection is not one of the cut links): "leader"
// while it believes it leads, else the partition's error code.
func leaderView(label string) observer {
	return func(_ context.Context, r *run) ([]fact, error) {
		id, _ := r.idOf(label)
		p, err := QuorumView(r.sys, id)
		if err != nil {
			return nil, err
		}
		v := "leader in " + r.epoch(int64(p.LeaderEpoch))
		if p.ErrorCode != 0 {
			v = fmt.Sprintf("error %d", p.ErrorCode)
		}
		return []fact{{key: "DescribeQuorum at " + label, value: v}}, nil
	}
}

func isolatedLeader(l *lockstep) {
	l.begin()
	l.observe("start", quorumStatus)
	cut := l.each(func(r *run) error { id, _ := r.idOf("L0"); return r.sys.Isolate(l.ctx, id) })
	l.newLeader(30*time.Second, "L0 isolated", cut)
	resigned := l.wait("L0 stepped down", 30*time.Second, func(r *run) (bool, string) {
		id, _ := r.idOf("L0")
		p, err := QuorumView(r.sys, id)
		return err == nil && p.ErrorCode != 0, fmt.Sprintf("error code %d, %v", p.ErrorCode, err)
	})
	for i, r := range l.runs {
		r.note("L0 isolated", "cut to L0 stepping down", fmt.Sprintf("%.1fs", resigned[i].Sub(cut[i]).Seconds()))
	}
	l.observe("L0 isolated", quorumStatus, quorumReplication, quorumStateResigned("L0"), leaderView("L0"))
	l.each(func(r *run) error { return r.sys.Heal(l.ctx) })
	l.caughtUp("L0", time.Minute)
	l.observe("healed", quorumStatus, quorumReplication, quorumState("L0"), leaderView("L0"))
}

// logStart says where node label's metadata log starts, against F's end
// at its kill, and whether a snapshot ends there (the node can serve from
// its log start on only with one).
func logStart(label string) observer {
	return func(_ context.Context, r *run) ([]fact, error) {
		id, _ := r.idOf(label)
		start, err := r.sys.LogStart(id)
		if err != nil {
			return nil, err
		}
		offs, err := SnapshotOffsets(r.sys.MetadataDir(id))
		if err != nil {
			return nil, err
		}
		where := "at or below F's end at its kill"
		if start > r.fEnd {
			where = "above F's end at its kill"
		}
		snap := "no snapshot ends there"
		if slices.Contains(offs, start) {
			snap = "a snapshot ends there"
		}
		return []fact{{key: "log start of " + label, value: where + ", " + snap}}, nil
	}
}

// voterEnd is voter id's log end offset as the quorum leader last saw it.
func voterEnd(r *run, id int32) (int64, error) {
	p, err := QuorumView(r.sys, mustLeader(r))
	if err != nil {
		return 0, err
	}
	for _, v := range p.CurrentVoters {
		if v.ReplicaID == id {
			return v.LogEndOffset, nil
		}
	}
	return 0, fmt.Errorf("voter %d not in the leader's DescribeQuorum answer", id)
}

func followerBehindSnapshot(l *lockstep) {
	l.begin()
	for _, r := range l.runs {
		for _, id := range r.sys.Controllers() {
			if r.label(id) != "L0" {
				r.labels[id] = "F" // the lowest follower
				break
			}
		}
	}
	l.observe("start", quorumStatus)
	l.each(func(r *run) error { id, _ := r.idOf("F"); return r.sys.Kill(l.ctx, id) })
	for _, r := range l.runs {
		id, _ := r.idOf("F")
		end, err := voterEnd(r, id)
		if err != nil {
			l.t.Fatal(err)
		}
		r.fEnd = end
	}
	l.wait("the high watermark past F's end", 30*time.Second, func(r *run) (bool, string) {
		q, s := observeLeader(r)
		return q.HighWatermark > r.fEnd+2, s
	})
	began := l.each(func(r *run) error { id, _ := r.idOf("L0"); return r.sys.Snapshot(l.ctx, id) })
	held := l.wait("L0's log start past F's end", 100*time.Second, func(r *run) (bool, string) {
		id, _ := r.idOf("L0")
		start, err := r.sys.LogStart(id)
		return err == nil && start > r.fEnd, fmt.Sprintf("log start %d, F's end %d, %v", start, r.fEnd, err)
	})
	for i, r := range l.runs {
		r.note("L0 snapshotted", "to L0's log start past F", fmt.Sprintf("%.1fs", held[i].Sub(began[i]).Seconds()))
	}
	l.observe("L0 snapshotted", quorumReplication, logStart("L0"))
	l.each(func(r *run) error { id, _ := r.idOf("F"); return r.sys.Start(l.ctx, id) })
	l.caughtUp("F", time.Minute)
	l.observe("F restarted", quorumStatus, quorumReplication, logStart("F"), quorumStateVoteUncompared("F"))
}

// TestSameScenariosOnKafkaAndKraftlab runs the failure scenarios on a
// kraftlab playground and on a real Kafka 4.4 cluster of the same shape
// (3 controllers, 2 brokers, the same timings) step by step, reads both
// with Kafka's own tools and the quorum-state files, and fails on any
// difference testdata/samescenario-known.tsv does not list.
func TestSameScenariosOnKafkaAndKraftlab(t *testing.T) {
	k := needKafka(t)
	known := readKnownDifferences(t)
	ctx := context.Background()
	dir := t.TempDir()

	var kc *KafkaCluster
	var kerr error
	started := make(chan struct{})
	go func() { // the JVMs start while the playground does
		defer close(started)
		kc, kerr = StartKafkaCluster(ctx, k, filepath.Join(dir, "kafka"), KafkaClusterShape{Controllers: 3, Brokers: 2, Extra: append(slices.Clone(sameTimings), kafkaSnapshots...), Proxied: true})
	}()
	p := startPlayground(t, KraftlabUpArgs(3, 2, sameTimings)...)
	<-started
	if kerr != nil {
		t.Fatal(kerr)
	}
	kafkaSys := KafkaSystem{C: kc}
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range append(kafkaSys.Controllers(), kafkaSys.Brokers()...) {
				t.Logf("kafka node %d's log:\n%s", id, indent(kc.Nodes[id].Log(30)))
			}
		}
		kc.Close()
	})
	runs := []*run{{sys: NewKraftlabSystem(p), k: k}, {sys: kafkaSys, k: k}}
	for _, r := range runs {
		r.labels = map[int32]string{}
	}
	for _, sc := range []struct {
		name string
		run  func(*lockstep)
	}{
		{"leader kill", leaderKill},
		{"graceful resignation", gracefulResignation},
		{"broker fenced", brokerFenced},
		{"partition leader killed", partitionLeaderKill},
		{"partition leader stopped", partitionLeaderStopped},
		{"isolated leader", isolatedLeader},
		{"follower behind a snapshot", followerBehindSnapshot},
		{"ELR after the last ISR member is fenced", elrAfterLastIsrFenced},
		{"reassignment with a throttle", reassignmentWithAThrottle},
		{"preferred election after a restart", preferredElectionAfterARestart},
	} {
		finished := false // a difference fails a scenario that ran to its end
		ok := t.Run(sc.name, func(t *testing.T) {
			l := &lockstep{t: t, ctx: ctx, scenario: sc.name, runs: runs}
			defer func() {
				if t.Failed() {
					for _, r := range runs {
						t.Logf("%s's tools:\n%s", r.sys.Name(), strings.Join(r.toolLogs, ""))
					}
				}
				for _, r := range runs {
					r.toolLogs = nil
				}
			}()
			sc.run(l)
			finished = true
			l.compare(known)
		})
		if !ok && !finished {
			break // the next scenario needs every node running again
		}
	}
}
