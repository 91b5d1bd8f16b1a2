package zookeeper

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/kraftlab/kraftlab/internal/poll"
)

// testTimeout bounds a test's starts and waits; a JVM starts in 1-3 s.
const testTimeout = 30 * time.Second

// testTick is short, so that a dead session expires within a second.
const testTick = 100 * time.Millisecond

// runtimeOrSkip finds ZooKeeper or skips the test, saying what is missing.
func runtimeOrSkip(t *testing.T) Runtime {
	t.Helper()
	rt, err := Find()
	if err != nil {
		t.Skipf("no ZooKeeper to run: %v", err)
	}
	return rt
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// startServer starts a ZooKeeper server that stops with the test.
func startServer(t *testing.T) (Runtime, *Server) {
	t.Helper()
	rt := runtimeOrSkip(t)
	began := time.Now()
	s, err := Start(testContext(t), rt, Config{Dir: t.TempDir(), TickTime: testTick})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ZooKeeper serving on %s after %v", s.Addr(), time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return rt, s
}

// connect opens a go-zookeeper session on s that ends with the test, and
// waits until it has one.
func connect(t *testing.T, s *Server, timeout time.Duration) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect([]string{s.Addr()}, timeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	poll.Until(t, testTimeout, "a session", func() bool { return conn.State() == zk.StateHasSession },
		func() string { return conn.State().String() })
	return conn
}

// quiet drops go-zookeeper's reconnection messages.
type quiet struct{}

func (quiet) Printf(string, ...any) {}

func create(t *testing.T, conn *zk.Conn, path, data string, flags int32) {
	t.Helper()
	if _, err := conn.Create(path, []byte(data), flags, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}

func TestZooKeepersOwnCLIReadsAZnodeAGoClientWrote(t *testing.T) {
	rt, s := startServer(t)
	conn := connect(t, s, 5*time.Second)
	const data = `{"host":"127.0.0.1","port":9092}`
	create(t, conn, "/brokers", "", 0)
	create(t, conn, "/brokers/ids", "", 0)
	create(t, conn, "/brokers/ids/1", data, zk.FlagEphemeral)

	got, err := rt.CLI(testContext(t), s.Addr(), "get", "/brokers/ids/1")
	if err != nil || got != data {
		t.Errorf("CLI get = %q, %v; want %q", got, err, data)
	}
	got, err = rt.CLI(testContext(t), s.Addr(), "ls", "/brokers/ids")
	if err != nil || got != "[1]" {
		t.Errorf("CLI ls = %q, %v; want [1]", got, err)
	}
	got, err = rt.CLI(testContext(t), s.Addr(), "get", "/brokers/ids/2")
	if err == nil || !strings.Contains(got, "Node does not exist") {
		t.Errorf("CLI get of a missing znode = %q, %v; want its error", got, err)
	}
}

func TestAKilledServerRestartsWithItsZnodesAndExpiresTheDeadSessions(t *testing.T) {
	_, s := startServer(t)
	// Long enough a session to see its ephemeral znode back after the
	// restart, short enough to see it expire.
	const session = 3 * time.Second
	conn := connect(t, s, session)
	create(t, conn, "/kept", "persistent", 0)
	create(t, conn, "/gone", "ephemeral", zk.FlagEphemeral)
	pid := s.Pid()

	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.Running() || s.Pid() != 0 {
		t.Fatalf("after Kill: running %v, pid %d", s.Running(), s.Pid())
	}
	// The session dies with its client, without telling the server.
	conn.Close()

	if err := s.Start(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if !s.Running() || s.Pid() == pid || s.Pid() == 0 {
		t.Fatalf("after Start: running %v, pid %d (was %d)", s.Running(), s.Pid(), pid)
	}
	again := connect(t, s, session)
	data, _, err := again.Get("/kept")
	if err != nil || string(data) != "persistent" {
		t.Errorf("/kept after the restart: %q, %v", data, err)
	}
	if ok, _, err := again.Exists("/gone"); err != nil || !ok {
		t.Errorf("the dead session's ephemeral znode right after the restart: exists %v, %v", ok, err)
	}
	poll.Until(t, testTimeout, "the dead session's ephemeral znode to go", func() bool {
		ok, _, err := again.Exists("/gone")
		return err == nil && !ok
	})
}

func TestStopIsCleanAndTheServerStartsAgain(t *testing.T) {
	_, s := startServer(t)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.Running() || s.Pid() != 0 {
		t.Errorf("after Stop: running %v, pid %d", s.Running(), s.Pid())
	}
	if conn, err := net.Dial("tcp", s.Addr()); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Stop", s.Addr())
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := s.Start(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(testContext(t)); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("Start of a running server: %v", err)
	}
	log, err := os.ReadFile(filepath.Join(s.Dir(), LogFile))
	if err != nil || strings.Count(string(log), "--- kraftlab: starting ZooKeeper") != 2 {
		t.Errorf("log %s: %v\n%s", LogFile, err, log)
	}
}

func TestABadClasspathNamesTheInstallCommand(t *testing.T) {
	rt := runtimeOrSkip(t)
	rt.Classpath = t.TempDir()
	_, err := Start(testContext(t), rt, Config{Dir: t.TempDir()})
	if err == nil {
		t.Fatal("started without ZooKeeper's jars")
	}
	t.Log(err)
	for _, want := range []string{InstallZooKeeper, "exited before serving", "ZooKeeperServerMain"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestStartGivesUpWhenItsContextEnds(t *testing.T) {
	rt := runtimeOrSkip(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Start(ctx, rt, Config{Dir: t.TempDir()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Start with an ended context: %v", err)
	}
}

func TestServerAnswersItsStateWhileItStartsAndStops(t *testing.T) {
	_, s := startServer(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_, _, _ = s.Running(), s.Pid(), s.Addr()
			}
		}
	}()
	if err := s.Kill(); err != nil {
		t.Error(err)
	}
	if err := s.Start(testContext(t)); err != nil {
		t.Error(err)
	}
	close(stop)
	wg.Wait()
}

// mntr counts what a client made: its session, its znodes, its watch.
func TestMonitorCountsSessionsAndZnodes(t *testing.T) {
	_, s := startServer(t)
	c := connect(t, s, 4*time.Second)
	if _, err := c.Create("/m", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.ExistsW("/m"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := s.Monitor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Connections < 1 || m.Ephemerals != 1 || m.Watches < 1 || m.Znodes < 2 || m.PacketsReceived < 2 {
		t.Fatalf("mntr: %+v", m)
	}
}
