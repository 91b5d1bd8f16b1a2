package zookeeper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultTickTime is ZooKeeper's tick when Config leaves it zero: a
// quarter of ZooKeeper's stock 2 s, so that sessions of a playground
// expire in seconds.
const DefaultTickTime = 500 * time.Millisecond

// DefaultMaxSessionTimeout is the longest session the server grants when
// Config leaves it zero. Kafka brokers ask for 18 s
// (zookeeper.session.timeout.ms); ZooKeeper's own cap, 20 ticks, would cut
// that to 10 s at DefaultTickTime.
const DefaultMaxSessionTimeout = 40 * time.Second

// ConfigFile and LogFile are the names, in Config.Dir, of the server's
// configuration and of the log that keeps its standard output and error.
const (
	ConfigFile = "zoo.cfg"
	LogFile    = "zookeeper.log"
)

// stopGrace bounds how long Stop waits for ZooKeeper to leave after
// SIGTERM before it kills it.
const stopGrace = 10 * time.Second

// pollEvery is how often Start asks the starting server whether it serves.
const pollEvery = 50 * time.Millisecond

// tailLines is how many of the log's last lines an error quotes.
const tailLines = 20

// Config is how Start runs a ZooKeeper server.
type Config struct {
	// Dir is the server's folder, created by the caller: its data, its
	// configuration and its log.
	Dir string
	// Port is the client port on 127.0.0.1; 0 picks a free one, which
	// the server keeps across restarts.
	Port int
	// TickTime is ZooKeeper's basic time unit; 0 means DefaultTickTime.
	// The shortest session the server grants is two ticks.
	TickTime time.Duration
	// MaxSessionTimeout is the longest session the server grants; 0
	// means DefaultMaxSessionTimeout.
	MaxSessionTimeout time.Duration
	// Logger receives the server's starts and stops; nil discards them.
	Logger *slog.Logger
}

// Server is one ZooKeeper server running as a child process. Its methods
// are safe for concurrent use.
type Server struct {
	rt     Runtime
	cfg    Config
	addr   string
	logger *slog.Logger

	// op serialises Start, Stop and Kill, which wait on the process, so
	// that Running and Pid answer while one of them waits.
	op sync.Mutex

	mu   sync.Mutex
	proc *process // nil before the first Start and after a stop
}

// process is one run of the JVM.
type process struct {
	os   *os.Process
	done chan struct{} // closed once the process exited and was reaped
	err  error         // how it exited, once done is closed
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start writes ZooKeeper's configuration in cfg.Dir and starts the server,
// returning once it serves clients on 127.0.0.1 or, failing that, when ctx
// ends, with the end of the server's log in the error.
func Start(ctx context.Context, rt Runtime, cfg Config) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("start ZooKeeper: no folder given")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("start ZooKeeper: %w", err)
	}
	cfg.Dir = dir
	if cfg.TickTime == 0 {
		cfg.TickTime = DefaultTickTime
	}
	if cfg.MaxSessionTimeout == 0 {
		cfg.MaxSessionTimeout = DefaultMaxSessionTimeout
	}
	if cfg.TickTime < time.Millisecond || cfg.MaxSessionTimeout < 2*cfg.TickTime {
		return nil, fmt.Errorf("start ZooKeeper: tick %v and longest session %v: the session needs at least two ticks", cfg.TickTime, cfg.MaxSessionTimeout)
	}
	if cfg.Port == 0 {
		if cfg.Port, err = freePort(); err != nil {
			return nil, fmt.Errorf("start ZooKeeper: %w", err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start ZooKeeper: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(zooCfg(cfg)), 0o644); err != nil {
		return nil, fmt.Errorf("start ZooKeeper: %w", err)
	}
	s := &Server{rt: rt, cfg: cfg, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)), logger: cfg.Logger}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// zooCfg is the server's configuration: standalone, on 127.0.0.1 only,
// without the admin web server, with every four-letter command allowed.
func zooCfg(cfg Config) string {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	return fmt.Sprintf(`# Written by kraftlab for its ZooKeeper-era mode.
tickTime=%d
minSessionTimeout=%d
maxSessionTimeout=%d
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
`, ms(cfg.TickTime), 2*ms(cfg.TickTime), ms(cfg.MaxSessionTimeout), cfg.Dir, cfg.Port)
}

// freePort returns a port free on 127.0.0.1 now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Addr is the server's client address, 127.0.0.1:port.
func (s *Server) Addr() string { return s.addr }

// Dir is the server's folder.
func (s *Server) Dir() string { return s.cfg.Dir }

// Running reports whether the server's process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited()
}

// Pid is the process id of the running server, 0 when none runs.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return 0
	}
	return s.proc.os.Pid
}

// Start starts the server again, on the same port and folder, after Stop
// or Kill: the data it had committed survives. It returns once the
// server serves, or with an error when ctx ends or the server exits
// first.
func (s *Server) Start(ctx context.Context) error {
	s.op.Lock()
	defer s.op.Unlock()
	if s.Running() {
		return fmt.Errorf("start ZooKeeper on %s: already running", s.addr)
	}
	logPath := filepath.Join(s.cfg.Dir, LogFile)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start ZooKeeper: %w", err)
	}
	// This run's lines start here; an error quotes only them.
	from, err := logFile.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = fmt.Fprintf(logFile, "--- kraftlab: starting ZooKeeper on %s at %s\n", s.addr, time.Now().Format(time.RFC3339))
	}
	if err != nil {
		logFile.Close()
		return fmt.Errorf("start ZooKeeper: %w", err)
	}

	began := time.Now()
	cmd := exec.Command(s.rt.Java, s.jvmArgs()...)
	cmd.Dir = s.cfg.Dir
	// A file, not a writer, so that the child writes it itself and no
	// goroutine of ours copies its output.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = procAttr()
	p, err := launch(cmd)
	logFile.Close() // the child holds its own copy
	if err != nil {
		return fmt.Errorf("start ZooKeeper: %w", err)
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()

	if err := waitServing(ctx, s.addr, p); err != nil {
		if !p.exited() {
			p.os.Kill()
			<-p.done
		}
		tail := logTail(logPath, from)
		if strings.Contains(tail, "Could not find or load main class") || strings.Contains(tail, "NoClassDefFoundError") {
			err = fmt.Errorf("%w (zk mode needs ZooKeeper: %s)", err, InstallZooKeeper)
		}
		return fmt.Errorf("start ZooKeeper on %s: %w; the end of %s:\n%s", s.addr, err, logPath, tail)
	}
	s.logger.Info("ZooKeeper serving", "addr", s.addr, "pid", p.os.Pid, "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// jvmArgs runs ZooKeeperServerMain on the configuration, tuned to start
// fast rather than to run fast: the playground's load is light.
func (s *Server) jvmArgs() []string {
	return []string{
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-XX:-UsePerfData",
		"-Djava.net.preferIPv4Stack=true",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-cp", s.rt.Classpath,
		"org.apache.zookeeper.server.ZooKeeperServerMain",
		filepath.Join(s.cfg.Dir, ConfigFile),
	}
}

// launch starts cmd and reaps it when it exits.
func launch(cmd *exec.Cmd) (*process, error) {
	p := &process{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Linux sends Pdeathsig when the thread that started the child
		// ends, not when the process does; this goroutine keeps its
		// thread until the child has exited.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		p.os = cmd.Process
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// waitServing polls addr until ZooKeeper answers that it serves, p exits
// or ctx ends.
func waitServing(ctx context.Context, addr string, p *process) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if serving(ctx, addr) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not serving yet: %w", context.Cause(ctx))
		case <-p.done:
			return fmt.Errorf("exited before serving: %v", p.err)
		case <-tick.C:
		}
	}
}

// serving asks addr the four-letter command srvr, which a ZooKeeper
// server answers with its version only once it serves requests (before,
// it says it is not serving).
func serving(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return false
	}
	answer, _ := io.ReadAll(conn)
	return bytes.HasPrefix(answer, []byte("Zookeeper version:"))
}

// logTail returns the last lines of the log at path from offset from.
func logTail(path string, from int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	if from > int64(len(b)) {
		from = 0
	}
	lines := strings.Split(strings.TrimRight(string(b[from:]), "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.Join(lines, "\n")
}

// Stop asks the server to leave with SIGTERM and waits for it; after
// stopGrace it kills it and says so. Stopping a stopped server does
// nothing.
func (s *Server) Stop() error {
	s.op.Lock()
	defer s.op.Unlock()
	p := s.current()
	if p == nil {
		return nil
	}
	var err error
	if sigErr := p.os.Signal(syscall.SIGTERM); sigErr != nil && !p.exited() {
		err = fmt.Errorf("stop ZooKeeper (pid %d): %w", p.os.Pid, sigErr)
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-p.done:
	case <-grace.C:
		p.os.Kill()
		<-p.done
		err = fmt.Errorf("stop ZooKeeper (pid %d): still running %v after SIGTERM; killed", p.os.Pid, stopGrace)
	}
	s.forget(p)
	s.logger.Info("ZooKeeper stopped", "addr", s.addr, "pid", p.os.Pid)
	return err
}

// Kill kills the server with SIGKILL, as a crash would, and waits until
// it is gone. Killing a stopped server does nothing.
func (s *Server) Kill() error {
	s.op.Lock()
	defer s.op.Unlock()
	p := s.current()
	if p == nil {
		return nil
	}
	var err error
	if killErr := p.os.Kill(); killErr != nil && !p.exited() {
		err = fmt.Errorf("kill ZooKeeper (pid %d): %w", p.os.Pid, killErr)
	}
	<-p.done
	s.forget(p)
	s.logger.Info("ZooKeeper killed", "addr", s.addr, "pid", p.os.Pid)
	return err
}

// current returns the running process, nil when none runs.
func (s *Server) current() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return nil
	}
	return s.proc
}

// forget drops p once it has exited.
func (s *Server) forget(p *process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == p {
		s.proc = nil
	}
}
