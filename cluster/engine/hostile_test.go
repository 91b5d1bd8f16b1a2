package engine_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/engine"
	"github.com/kraftlab/kraftlab/cluster/view"
	"github.com/kraftlab/kraftlab/internal/poll"
)

// The hostile-input suite: each probe attacks a real playground (three
// controllers, three brokers, the fast profile) as a local process could,
// then checks that every node still serves: a quorum leader and a canary
// acks=all produce within hostileRecovery of the attack's end, open files
// under half the process's limit and the heap under hostileMaxRSS. Each
// probe lives in a file of its own, hostile_<probe>_test.go.

// hostileRecovery is how long the playground has to serve again after an
// attack. The aim is 5 s; a loaded CI machine under the race detector
// gets more, and the test logs what it took.
const hostileRecovery = 20 * time.Second

// hostileMaxRSS bounds the process's resident memory after an attack.
const hostileMaxRSS = 1536 << 20

// hostileTarget is a playground under attack and the canary topic.
type hostileTarget struct {
	p           *cluster.Playground
	brokers     []string // listener addresses
	controllers []string
}

// canaryTopic is the topic the checks produce to.
const canaryTopic = "canary"

// openHostile starts the playground a probe attacks, with the canary
// topic on every broker; sets are --set overrides (key=value), e.g. a
// limit lowered so that the probe is small.
func openHostile(t *testing.T, sets ...string) *hostileTarget {
	t.Helper()
	return openHostileAt(t, "", nil, sets...)
}

// openHostileWith is openHostile with --set overrides and a logger for
// the nodes' server log (nil discards it).
func openHostileWith(t *testing.T, overrides []string, logger *slog.Logger) *hostileTarget {
	t.Helper()
	return openHostileAt(t, "", logger, overrides...)
}

// openHostileAt is openHostile with the playground's data folder at
// dataDir ("" for a temporary one), for a probe that prepares the nodes'
// folders, and a logger for the nodes' server log (nil discards it).
func openHostileAt(t *testing.T, dataDir string, logger *slog.Logger, sets ...string) *hostileTarget {
	t.Helper()
	cfg, err := cluster.NewConfig(3, 3, cluster.ProfileFast, sets, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = logger
	p, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	waitCond(t, p, "caught-up")
	// The canary has a replica on every broker: all of them registered.
	for _, id := range cfg.BrokerIDs() {
		waitCond(t, p, fmt.Sprintf("unfenced %d", id))
	}
	ht := &hostileTarget{p: p}
	for _, n := range p.View().Nodes {
		if n.Kind == view.KindBroker {
			ht.brokers = append(ht.brokers, n.Listener)
		} else {
			ht.controllers = append(ht.controllers, n.Listener)
		}
	}
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// The quorum may be caught up before the three brokers are
	// registered and unfenced: until then the replication factor is
	// refused.
	poll.Until(t, 15*time.Second, "the canary topic created", func() bool {
		var r kadm.CreateTopicResponse
		if r, err = kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, canaryTopic); err == nil {
			err = r.Err
		}
		return !errors.Is(err, kerr.InvalidReplicationFactor)
	})
	if err != nil {
		t.Fatalf("create the canary topic: %v", err)
	}
	ht.checkServing(t, "before the attack")
	return ht
}

func (ht *hostileTarget) client(t *testing.T) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(ht.brokers...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordRetries(1000), kgo.RetryTimeout(hostileRecovery))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// checkServing checks, after an attack, that the quorum has a leader and
// a canary record is acknowledged by all in-sync replicas, and that the
// process holds no more than its share of files and memory.
func (ht *hostileTarget) checkServing(t *testing.T, when string) {
	t.Helper()
	start := time.Now()
	poll.Until(t, hostileRecovery, "a quorum leader "+when, func() bool {
		v := ht.p.View()
		_, ok := v.Leader()
		return ok
	}, func() string { return describeNodes(ht.p) })
	cl := ht.client(t)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hostileRecovery)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: canaryTopic, Value: []byte("canary")}).FirstErr(); err != nil {
		t.Fatalf("canary produce %s: %v\n%s", when, err, describeNodes(ht.p))
	}
	t.Logf("serving %s: leader and canary in %v", when, time.Since(start).Round(time.Millisecond))
	files, limit := openFiles(t)
	if files > limit/2 {
		t.Errorf("%s: %d open files, more than half the limit %d", when, files, limit)
	}
	if rss := residentBytes(t); rss > hostileMaxRSS {
		t.Errorf("%s: resident memory %d MiB, more than %d MiB", when, rss>>20, hostileMaxRSS>>20)
	}
}

// openFiles counts the process's open file descriptors and returns its
// soft limit.
func openFiles(t *testing.T) (n, limit int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	return len(ents), int(rl.Cur)
}

// residentBytes is the process's resident set size.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal(fmt.Errorf("no VmRSS in /proc/self/status"))
	return 0
}

// A playground that nobody attacks passes the checks: the harness itself.
func TestHostileHarness(t *testing.T) {
	ht := openHostile(t)
	ht.checkServing(t, "without an attack")
}
