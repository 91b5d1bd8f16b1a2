package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kraftlab/kraftlab/cluster"
	"github.com/kraftlab/kraftlab/cluster/control"
	"github.com/kraftlab/kraftlab/cluster/view"
)

// upOptions are up's flags.
type upOptions struct {
	controllers, brokers int
	profile              string
	sets                 []string
	// quorum is --quorum: pull, push, or "" when not given.
	quorum string
	// mode is --mode: kraft or zk; controllersSet says --controllers
	// was given.
	mode           string
	controllersSet bool
	dataDir        string
	logFile        string
	headless       bool
	// sim is --sim, seed --seed; seedSet says --seed was given.
	sim     bool
	seed    uint64
	seedSet bool
}

func (o *upOptions) config() (cluster.Config, error) {
	sets, err := o.allSets()
	if err != nil {
		return cluster.Config{}, err
	}
	mode, err := cluster.ParseMode(o.mode)
	if err != nil {
		return cluster.Config{}, err
	}
	controllers := o.controllers
	if mode == cluster.ModeZK {
		if o.controllersSet && o.controllers > 0 {
			return cluster.Config{}, errors.New("--mode zk has no KRaft controllers (its controller is a broker elected through ZooKeeper); leave out --controllers")
		}
		if o.quorum != "" {
			return cluster.Config{}, errors.New("--mode zk has no metadata quorum; leave out --quorum")
		}
		controllers = 0
	}
	if o.seedSet && !o.sim {
		return cluster.Config{}, errors.New("--seed seeds the simulator: give --sim with it")
	}
	if o.sim && mode == cluster.ModeZK {
		return cluster.Config{}, errors.New("--sim runs KRaft only; leave out --mode zk")
	}
	cfg, err := cluster.NewConfigMode(mode, controllers, o.brokers, cluster.ProfileName(o.profile), sets, o.dataDir)
	if err != nil {
		return cluster.Config{}, err
	}
	if o.sim {
		cfg.Sim, cfg.Seed = true, o.seed
		if err := cfg.Validate(); err != nil {
			return cluster.Config{}, err
		}
	}
	return cfg, nil
}

// quorumModes are --quorum's values, the default first.
var quorumModes = []string{"pull", "push"}

// allSets are the --set values with --quorum as the setting it stands for.
// A --set of that setting to another value is an error rather than one
// silently winning over the other.
func (o *upOptions) allSets() ([]string, error) {
	if o.quorum == "" {
		return o.sets, nil
	}
	if !slices.Contains(quorumModes, o.quorum) {
		return nil, fmt.Errorf("bad value %q for --quorum: want pull (Kafka's KRaft: followers fetch) or push (classic Raft: the leader sends AppendEntries)", o.quorum)
	}
	for _, kv := range o.sets {
		k, v, _ := strings.Cut(kv, "=")
		if strings.TrimSpace(k) == view.ReplicationKey && strings.TrimSpace(v) != o.quorum {
			return nil, fmt.Errorf("--quorum %s and --set %s disagree: give one of them", o.quorum, kv)
		}
	}
	return append(slices.Clip(o.sets), view.ReplicationKey+"="+o.quorum), nil
}

func newUpCommand(e *env) *cobra.Command {
	cmd, _ := upCommand(e)
	return cmd
}

// upCommand returns the up command and the options its flags fill, which
// scenario run also uses to read a scenario's up line.
func upCommand(e *env) (*cobra.Command, *upOptions) {
	o := &upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a playground",
		Long: `Up starts a playground: controllers 1..N (the KRaft voters) and brokers
101..100+M (observers of the metadata quorum), each listening on 127.0.0.1,
and serves the control API that the other commands use. The controllers form
a dynamic quorum (kraft.version 1, as Kafka 4.4's kafka-storage format
--initial-controllers makes one), which "kraftlab controllers" grows and
shrinks; --set kraft.version=0 starts a static one
(controller.quorum.voters) instead, which "kraftlab controllers upgrade"
(or kafka-features upgrade --feature kraft.version=1) makes dynamic. With --mode zk it starts a real
ZooKeeper (it needs Java and Debian's zookeeper package) and brokers only,
which elect Kafka 3.9's ZooKeeper-era controller among them. With --sim
every part of 3 controllers (a static quorum, kraft.version 0) and 3 brokers
runs under the seeded simulator instead, with no sockets: simulated time
passes only with wait, clock advance or clock resume, the same --seed and
actions give the same run, and "kraftlab history" and "kraftlab rewind"
replay and branch it. It runs until
Ctrl-C, SIGTERM or "kraftlab down", and then removes its temporary data
folder (the banner names it) and its session folder with the control socket.
Several playgrounds can run side by side under different --session names.
Session folders that an up killed with kill -9 left behind (their lock free,
their process gone) are removed, with their data folders, by the next up,
which says so.

A closed output does not stop it: when whatever reads its standard output
or error goes away (kraftlab up --headless | head -1), up keeps running and
drops what it would have printed there, saying so once on the other stream.

Timing profiles: workshop (default; every effect shows within about ten
seconds), kafka (Apache Kafka's defaults), fast (for tests and scenarios).
--set overrides one value by its Kafka configuration name:

` + settingsTable(),
		Example:     indentExample("kraftlab up --headless\nkraftlab up --controllers 5 --brokers 0 --profile kafka\nkraftlab up --quorum push\nkraftlab up --mode zk\nkraftlab up --sim --seed 7\nkraftlab up --set controller.quorum.fetch.timeout.ms=6000"),
		Annotations: map[string]string{annotNoScenario: "a scenario's first line may be up ..., to set the shape of its own playground"},
	}
	f := cmd.Flags()
	f.IntVar(&o.controllers, "controllers", 3, "number of controllers (KRaft voters), IDs 1..N")
	f.IntVar(&o.brokers, "brokers", 3, "number of brokers, IDs 101..100+M")
	f.StringVar(&o.profile, "profile", string(cluster.DefaultProfile), "timing profile: "+strings.Join(cluster.ProfileNames(), ", "))
	f.StringArrayVar(&o.sets, "set", nil, "override a timing value by its Kafka config name, key=value (repeatable)")
	f.StringVar(&o.quorum, "quorum", "", "how the metadata quorum replicates: pull (Kafka's KRaft: followers fetch; the default) or push (classic Raft: the leader sends AppendEntries); the same as --set "+view.ReplicationKey+"=MODE")
	f.StringVar(&o.mode, "mode", string(cluster.ModeKRaft), "where the metadata comes from: kraft (Kafka 4's KRaft quorum) or zk (Kafka 3.9's ZooKeeper-era controller on a real ZooKeeper; needs Java and ZooKeeper)")
	f.StringVar(&o.dataDir, "data-dir", "", "keep the nodes' data in this folder (default: a temporary folder removed on exit)")
	f.StringVar(&o.logFile, "log-file", "", "append every node's server log (Kafka's server.log: elections, registrations, fetch errors…) to this file, each line naming its node")
	f.BoolVar(&o.headless, "headless", false, "run without the TUI, printing events, until Ctrl-C, SIGTERM or kraftlab down (a closed output does not stop it)")
	cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(cluster.ProfileNames(), cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("set", completeSettings)
	f.BoolVar(&o.sim, "sim", false, "run every part of the cluster under the seeded simulator: one simulated network and clock, time moving only with wait, clock advance or the screen's space key, and a history to rewind (kraftlab history, kraftlab rewind); 3 controllers and 3 brokers")
	f.Uint64Var(&o.seed, "seed", 1, "the simulator's seed (with --sim): the same seed and the same actions give the same run")
	cmd.RegisterFlagCompletionFunc("quorum", cobra.FixedCompletions(quorumModes, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{string(cluster.ModeKRaft), string(cluster.ModeZK)}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		o.controllersSet = cmd.Flags().Changed("controllers")
		o.seedSet = cmd.Flags().Changed("seed")
		if len(args) > 0 {
			return usagef("up takes no arguments, got %q; e.g.: kraftlab up --controllers 3 --brokers 0", strings.Join(args, " "))
		}
		if _, err := o.config(); err != nil {
			return usagef("%v", err)
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg, _ := o.config()
		if o.logFile != "" {
			f, err := os.OpenFile(o.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return usagef("log file: %v", err)
			}
			defer f.Close()
			cfg.Logger = slog.New(slog.NewTextHandler(f, nil))
		}
		return runUp(e, cmd, cfg, o.headless)
	}
	return cmd, o
}

var sigpipeOnce sync.Once

// catchSIGPIPE turns a write to a closed pipe on standard output or error
// into an EPIPE error instead of the SIGPIPE that Go's runtime otherwise
// dies of there: a reader that went away (up --headless | head -1) must
// not kill every node and leave the session's folder and socket behind.
// It stays on for the life of the process.
func catchSIGPIPE() {
	sigpipeOnce.Do(func() {
		// Notify's sends never block: a full channel drops the signal,
		// which is all that is wanted of it.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	})
}

// outlet is one of up's output streams. The first failed write (EPIPE once
// its reader has gone) switches it off for good: later writes are dropped,
// and the other stream says so once, so that up goes on serving the
// playground until it is told to stop.
type outlet struct {
	mu     sync.Mutex
	w      io.Writer
	name   string
	other  *outlet
	broken bool
}

func (o *outlet) Write(b []byte) (int, error) {
	o.mu.Lock()
	if o.broken {
		o.mu.Unlock()
		return len(b), nil
	}
	_, err := o.w.Write(b)
	if err != nil {
		o.broken = true
	}
	o.mu.Unlock()
	if err != nil && o.other != nil {
		fmt.Fprintf(o.other, "kraftlab up: %s is gone (%v); the playground keeps running without it until Ctrl-C, SIGTERM or kraftlab down\n", o.name, err)
	}
	return len(b), nil
}

// playground is a running playground serving its control API.
type playground struct {
	pg      *cluster.Playground
	session control.Session
	// cfg is the playground's configuration, its data folder filled in.
	cfg cluster.Config
	// tmpData is the temporary data folder up made, removed by stop; ""
	// with --data-dir.
	tmpData string
	// stale says what up removed that a dead process had left.
	stale  []string
	srv    *control.Server
	ln     *control.Listener
	served chan error
	// down is closed when a client asks the playground to shut down.
	down chan struct{}
}

// startPlayground claims the session, starts the engine and serves the
// control API.
func startPlayground(ctx context.Context, e *env, s control.Session, cfg cluster.Config) (*playground, error) {
	ln, err := s.Listen()
	var running *control.RunningError
	if errors.As(err, &running) {
		return nil, usagef("%v; stop it with: kraftlab down%s, or start another beside it: kraftlab up --session NAME", err, sessionFlag(s.Name))
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	// The lock was free, so a data folder the session names is what a gone
	// process left, even one that cleanStale could not yet tell was gone.
	var stale []string
	if old := readDataMarker(s.Dir); old != "" {
		os.RemoveAll(old)
		os.Remove(filepath.Join(s.Dir, dataMarker))
		stale = append(stale, fmt.Sprintf("removed data folder %s, left in session %q by a process that is gone", old, s.Name))
	}
	tmpData := ""
	if cfg.DataDir == "" {
		// up makes the temporary folder itself, so that the banner can name
		// it and a later up can find it if this process dies.
		if tmpData, err = os.MkdirTemp("", "kraftlab-"+s.Name+"-"); err != nil {
			ln.Close()
			return nil, usagef("data folder: %v", err)
		}
		cfg.DataDir = tmpData
		writeDataMarker(s, tmpData)
	}
	pg, err := e.open(ctx, cfg)
	if err != nil {
		removeTemp(tmpData)
		ln.Close()
		return nil, usagef("%v", err)
	}
	p := &playground{pg: pg, session: s, cfg: cfg, tmpData: tmpData, stale: stale, ln: ln, served: make(chan error, 1), down: make(chan struct{})}
	var once sync.Once
	p.srv = control.NewServer(pg, func() { once.Do(func() { close(p.down) }) })
	go func() { p.served <- p.srv.Serve(socketOnly{ln}) }()
	return p, nil
}

// stop shuts the API down, then the playground, then releases the session.
func (p *playground) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if serr := <-p.served; err == nil {
		err = serr
	}
	if cerr := p.pg.Close(); err == nil {
		err = cerr
	}
	removeTemp(p.tmpData)
	// Empty the session folder while holding its lock, then let go.
	removeSessionFiles(p.session.Dir)
	// The server closed the socket already; this releases the lock.
	if lerr := p.ln.Close(); err == nil && !errors.Is(lerr, net.ErrClosed) {
		err = lerr
	}
	return err
}

func runUp(e *env, cmd *cobra.Command, cfg cluster.Config, headless bool) error {
	s, err := e.sessionOf(cmd)
	if err != nil {
		return err
	}
	started := time.Now()
	catchSIGPIPE()
	stale := cleanStale(filepath.Dir(s.Dir))
	p, err := startPlayground(cmd.Context(), e, s, cfg)
	if err != nil {
		return err
	}
	stderr := &outlet{w: cmd.ErrOrStderr(), name: "standard error"}
	w := &outlet{w: cmd.OutOrStdout(), name: "standard output", other: stderr}
	stderr.other = w
	for _, line := range append(stale, p.stale...) {
		fmt.Fprintln(w, line)
	}
	writeBanner(w, p)
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	go func() {
		select {
		case <-p.down:
			cancel()
		case <-ctx.Done():
		}
	}()
	if headless || !showScreen(ctx, e, p, started) {
		for ev, err := range p.pg.Events(ctx, 0, true) {
			if err != nil {
				break
			}
			fmt.Fprintln(w, ev)
		}
	}
	if err := p.stop(); err != nil {
		return usagef("shut playground %q down: %v", s.Name, err)
	}
	fmt.Fprintf(w, "playground %q is down\n", s.Name)
	return nil
}

// bannerWidth is the terminal width the banner keeps to: every line but
// one holding a long path fits, and no line wraps mid-word.
const bannerWidth = 80

// writeBanner says where the playground is and how to drive it, one item
// a line, before the live screen covers the terminal: the commands each
// on a line of their own, so that pasting one runs just it.
func writeBanner(w io.Writer, p *playground) {
	cfg := p.cfg
	v := p.pg.View()
	var controllers, brokers, bootstrap []string
	for _, n := range v.Nodes {
		addr := fmt.Sprintf("%d=%s", n.ID, n.Listener)
		if cfg.Sim {
			addr = fmt.Sprintf("%d (%s)", n.ID, n.Kind)
		}
		if n.Kind == view.KindController {
			controllers = append(controllers, addr)
		} else {
			brokers = append(brokers, addr)
			bootstrap = append(bootstrap, n.Listener)
		}
	}
	fmt.Fprintf(w, "kraftlab playground %q is up: %s\n", p.session.Name, shape(cfg))
	item := func(label string, values []string, sep string) {
		for _, line := range flowWords(values, sep, bannerWidth-bannerIndent) {
			fmt.Fprintf(w, "  %-*s %s\n", bannerIndent-3, label, line)
			label = ""
		}
	}
	zk := v.ZooKeeper != nil
	switch {
	case cfg.Sim:
		item("simulated", strings.Fields(fmt.Sprintf("seed %d: every part on one simulated network and clock, no sockets; time moves only with wait, clock advance, or clock resume (space on the screen); the same seed and actions give the same run", cfg.Seed)), " ")
		item("nodes", append(controllers, brokers...), "  ")
		item("quorum", []string{quorumWords(cfg)}, "")
		item("topic", strings.Fields("datasim: written by the simulated producer, replicated by the brokers' fetchers"), " ")
	case zk:
		item("mode", []string{"zk:", "Kafka", "3.9's", "controller,", "a", "broker", "elected", "through", "ZooKeeper", "at", v.ZooKeeper.Addr}, " ")
	default:
		item("controllers", controllers, "  ")
		item("quorum", []string{quorumWords(cfg)}, "")
	}
	if len(brokers) > 0 && !cfg.Sim {
		item("brokers", brokers, "  ")
		// The bootstrap servers of users' own Kafka tools: a few are
		// enough, as a client learns the rest from Metadata.
		item("bootstrap", []string{strings.Join(bootstrap[:min(len(bootstrap), 3)], ",")}, "")
		item("kcat", []string{"kcat -b " + bootstrap[0] + " -L"}, "")
		serves := "Metadata, topics, Produce and Fetch, idempotent producers, consumer groups (classic protocol); no transactions yet"
		if zk {
			// The ZooKeeper-era broker has no group coordinator.
			serves = "Metadata, topics, Produce and Fetch, idempotent producers; no transactions or consumer groups yet"
		}
		item("serves", strings.Fields(serves), " ")
	}
	data := cfg.DataDir + " (kept)"
	if p.tmpData != "" {
		data = p.tmpData + " (temporary: removed on exit)"
	}
	item("data", []string{data}, "")
	item("control", []string{p.session.Socket}, "")
	fl := sessionFlag(p.session.Name)
	where := "In another shell"
	if goRun {
		// go run's binary is gone once it exits: the commands go through
		// go run again, from the source folder.
		if wd, err := os.Getwd(); err == nil {
			where += ", in " + wd
		}
	}
	k := self
	fmt.Fprintf(w, "%s:\n", where)
	hints := []string{"status", "kill leader", "wait new-leader"}
	switch {
	case zk:
		hints = []string{"status", "kill controller", "topics describe"}
	case cfg.Sim:
		hints = []string{"wait leader", "kill leader", "wait new-leader", "history", "rewind 1"}
	}
	for _, c := range hints {
		fmt.Fprintf(w, "  %s %s%s\n", k, c, fl)
	}
	fmt.Fprintf(w, "More screens on it (quitting them leaves it running):\n  %s tui%s\n", k, fl)
	fmt.Fprintf(w, "Stop with Ctrl-C or:\n  %s down%s\n", k, fl)
}

// bannerIndent is the column the banner's values start at.
const bannerIndent = 15

// flowWords puts words on lines of at most w cells, sep between them on a
// line; a word longer than a line gets a line of its own, whole.
func flowWords(words []string, sep string, w int) []string {
	var lines []string
	line := ""
	for _, word := range words {
		switch {
		case line == "":
			line = word
		case len(line)+len(sep)+len(word) <= w:
			line += sep + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func shape(cfg cluster.Config) string {
	if cfg.Mode == cluster.ModeZK {
		return fmt.Sprintf("zk mode, %d brokers, profile %s", cfg.Brokers, cfg.Profile)
	}
	return fmt.Sprintf("%d controllers, %d brokers, profile %s", cfg.Controllers, cfg.Brokers, cfg.Profile)
}

// quorumWords says how the quorum of cfg replicates, for the banner.
func quorumWords(cfg cluster.Config) string {
	if m, _ := cfg.Settings.Get(view.ReplicationKey); m == "push" {
		return "push (classic Raft: the leader sends AppendEntries)"
	}
	return "pull (Kafka's KRaft: followers fetch; or up --quorum push)"
}

func sessionFlag(name string) string {
	if name == control.DefaultSession {
		return ""
	}
	return " --session " + name
}

// settingsTable lists every --set key with its value in each profile.
func settingsTable() string {
	var b strings.Builder
	var gets []func(string) (string, error)
	for _, p := range cluster.Profiles() {
		s, _ := cluster.ProfileSettings(p.Name)
		gets = append(gets, s.Get)
	}
	fmt.Fprintf(&b, "  %-50s %s\n", "key", strings.Join(cluster.ProfileNames(), " / "))
	for _, s := range cluster.SettingKeys() {
		vals := make([]string, len(gets))
		for i, get := range gets {
			vals[i], _ = get(s.Key)
		}
		fmt.Fprintf(&b, "  %-50s %s %s\n", s.Key, strings.Join(vals, " / "), unitSuffix(s.Unit))
	}
	return strings.TrimRight(b.String(), "\n")
}

func unitSuffix(u string) string {
	if u == "count" || strings.Contains(u, "|") {
		return ""
	}
	return u
}

// removeTemp removes a temporary data folder; "" is none.
func removeTemp(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
