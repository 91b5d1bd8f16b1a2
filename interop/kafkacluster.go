package interop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// KafkaCluster is a real Apache Kafka cluster in KRaft mode on 127.0.0.1:
// controllers 1..N (a static quorum, controller.quorum.voters, as
// kraftlab's) and brokers 101..100+M, every listener PLAINTEXT. Each node
// is its own JVM and can be killed, stopped and started again on the same
// data folder.
type KafkaCluster struct {
	ClusterID string
	// Nodes holds every node, controllers first, each by its id.
	Nodes map[int32]*KafkaNode
	// Proxies stand in front of each controller's listener, when the
	// shape asked for them; rules say which nodes they cut off.
	Proxies map[int32]*NodeProxy
	rules   LinkRules
	k       *Kafka
}

// KafkaNode is one Kafka process of a KafkaCluster.
type KafkaNode struct {
	ID         int32
	Controller bool
	// Addr is its one listener: CONTROLLER for a controller, PLAINTEXT
	// for a broker.
	Addr string
	// Dir holds its properties, logs and LogDir.
	Dir, LogDir string

	k      *Kafka
	server []string // the JVM options of the node itself, if not k's
	props  string
	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd's process has ended
	ending bool          // told to end: no longer counts as running
}

// KafkaClusterShape is what StartKafkaCluster starts: how many nodes and
// the lines every node's properties end with.
type KafkaClusterShape struct {
	Controllers, Brokers int
	// Extra lines go at the end of every node's properties (a controller
	// ignores broker-only keys and the reverse).
	Extra []string
	// Heap, when set, runs every node with kafka-server-start's JVM
	// options at this -Xmx and -Xms (e.g. "512m") instead of the
	// harness's tool options, as a measured cluster needs.
	Heap string
	// BrokerProtocol is the security protocol of the brokers' one
	// listener, also their inter-broker one: "" is PLAINTEXT. Extra
	// carries its SASL settings.
	BrokerProtocol string
	// FormatArgs go to every node's kafka-storage format, e.g.
	// --add-scram to create SCRAM users with the cluster.
	FormatArgs []string
	// Proxied puts a NodeProxy in front of every controller: each
	// advertises its proxy and controller.quorum.voters names the
	// proxies, so that Isolate can cut a node off. Controllers open no
	// connections to brokers, so these carry every link a quorum and its
	// observers use.
	Proxied bool
}

// KafkaServerJVMOptions are the JVM options bin/kafka-server-start.sh
// gives a Kafka node (kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS)
// with the heap set by the caller instead of its 1 GB: the harness's own
// tool options (C1 only, serial GC) would hold a measured broker back.
func KafkaServerJVMOptions(heap string) []string {
	return []string{"-Xmx" + heap, "-Xms" + heap, "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
		"-Djava.awt.headless=true"}
}

// freeAddr picks a free port of 127.0.0.1.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// StartKafkaCluster formats every node's folder under dir for one new
// cluster id with kafka-storage and starts them all; it returns once every
// process runs, not once the quorum has a leader.
func StartKafkaCluster(ctx context.Context, k *Kafka, dir string, shape KafkaClusterShape) (*KafkaCluster, error) {
	c := &KafkaCluster{ClusterID: NewClusterID(), Nodes: map[int32]*KafkaNode{}, k: k}
	var ids []int32
	for i := 1; i <= shape.Controllers; i++ {
		ids = append(ids, int32(i))
	}
	for i := 1; i <= shape.Brokers; i++ {
		ids = append(ids, int32(100+i))
	}
	for _, id := range ids {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		n := &KafkaNode{ID: id, Controller: id <= int32(shape.Controllers), Addr: addr, Dir: filepath.Join(dir, fmt.Sprintf("node-%d", id)), k: k}
		n.LogDir = filepath.Join(n.Dir, "kafka-logs")
		if shape.Heap != "" {
			n.server = KafkaServerJVMOptions(shape.Heap)
		}
		c.Nodes[id] = n
	}
	var voters []string
	for v := int32(1); v <= int32(shape.Controllers); v++ {
		addr := c.Nodes[v].Addr
		if shape.Proxied {
			if c.Proxies == nil {
				c.Proxies = map[int32]*NodeProxy{}
			}
			p, err := NewNodeProxy(v, addr, &c.rules)
			if err != nil {
				c.Close()
				return nil, err
			}
			c.Proxies[v] = p
			addr = p.Addr
		}
		voters = append(voters, fmt.Sprintf("%d@%s", v, addr))
	}
	for _, id := range ids {
		n := c.Nodes[id]
		lines := []string{
			"node.id=" + strconv.Itoa(int(id)),
			"controller.quorum.voters=" + strings.Join(voters, ","),
			"controller.listener.names=CONTROLLER",
			"log.dirs=" + n.LogDir,
		}
		if n.Controller {
			lines = append(lines, "process.roles=controller",
				"listeners=CONTROLLER://"+n.Addr,
				"listener.security.protocol.map=CONTROLLER:PLAINTEXT")
			if p := c.Proxies[id]; p != nil {
				lines = append(lines, "advertised.listeners=CONTROLLER://"+p.Addr)
			}
		} else {
			proto := shape.BrokerProtocol
			if proto == "" {
				proto = "PLAINTEXT"
			}
			lines = append(lines, "process.roles=broker",
				"listeners="+proto+"://"+n.Addr,
				"inter.broker.listener.name="+proto,
				"listener.security.protocol.map="+proto+":"+proto+",CONTROLLER:PLAINTEXT")
		}
		if err := n.writeConfig(append(lines, shape.Extra...)); err != nil {
			return nil, err
		}
	}
	// Formatting is a JVM per node: run them side by side.
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { errs[i] = c.Nodes[id].format(ctx, c.ClusterID, shape.FormatArgs) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, err
	}
	for _, id := range ids {
		if err := c.Nodes[id].Start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (n *KafkaNode) writeConfig(lines []string) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return err
	}
	n.props = filepath.Join(n.Dir, "server.properties")
	if err := os.WriteFile(n.props, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	logCfg := filepath.Join(n.Dir, "log4j2.properties")
	if err := os.WriteFile(logCfg, fmt.Appendf(nil, log4j2, filepath.Join(n.Dir, "server.log")), 0o644); err != nil {
		return err
	}
	kk := *n.k
	kk.JVMOptions = append(append([]string{}, n.k.JVMOptions...), "-Dlog4j2.configurationFile="+logCfg)
	n.k = &kk
	return nil
}

func (n *KafkaNode) format(ctx context.Context, clusterID string, extra []string) error {
	args := append([]string{"format", "--cluster-id=" + clusterID, "--config", n.props}, extra...)
	if r := n.k.Run(ctx, 2*time.Minute, MainStorage, args...); r.Err != nil {
		return fmt.Errorf("kafka-storage format node %d: %v: %s%s", n.ID, r.Err, r.Stdout, r.Stderr)
	}
	return nil
}

// Start runs the node's JVM on its data folder, as it was left.
func (n *KafkaNode) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return fmt.Errorf("kafka node %d already runs", n.ID)
	}
	out, err := os.OpenFile(filepath.Join(n.Dir, "stdout"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	kk := n.k
	if n.server != nil {
		kk = &Kafka{Java: n.k.Java, JarsDir: n.k.JarsDir, JVMOptions: append(slices.Clone(n.server), "-Dlog4j2.configurationFile="+filepath.Join(n.Dir, "log4j2.properties"))}
	}
	cmd := kk.Command(context.Background(), n.Dir, MainKafka, n.props)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start kafka node %d: %w", n.ID, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	n.cmd, n.done = cmd, done
	return nil
}

// Running reports whether the node's process was started and has not
// ended, by the harness or by itself; a node told to end no longer runs
// (so that nothing asks it in the middle of its shutdown).
func (n *KafkaNode) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.ending {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Kill ends the process with SIGKILL, as kraftlab's kill ends a node at
// once, and waits for it.
func (n *KafkaNode) Kill() error { return n.end(syscall.SIGKILL, 0) }

// Stop ends the process with SIGTERM, Kafka's clean shutdown (a leading
// controller resigns with EndQuorumEpoch first), and waits for it, killing
// it after timeout.
func (n *KafkaNode) Stop(timeout time.Duration) error { return n.end(syscall.SIGTERM, timeout) }

func (n *KafkaNode) end(sig syscall.Signal, timeout time.Duration) error {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.ending = cmd != nil
	n.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("kafka node %d does not run", n.ID)
	}
	cmd.Process.Signal(sig)
	var err error
	if timeout > 0 {
		select {
		case <-done:
		case <-time.After(timeout):
			cmd.Process.Kill()
			<-done
			err = fmt.Errorf("kafka node %d did not stop within %v of %v", n.ID, timeout, sig)
		}
	} else {
		<-done
	}
	n.mu.Lock()
	n.cmd, n.ending = nil, false
	n.mu.Unlock()
	return err
}

// Log is the last n lines of what the node logged and printed. (The
// jars the harness fetches hold no SLF4J binding, so Kafka's own logging
// is silent; what shows is what the JVM printed, such as a fatal error.)
func (n *KafkaNode) Log(lines int) string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "server.log"))
	o, _ := os.ReadFile(filepath.Join(n.Dir, "stdout"))
	return lastLines(string(b)+stripSLF4J(string(o)), lines)
}

// MetadataDir is the node's __cluster_metadata-0 folder.
func (n *KafkaNode) MetadataDir() string { return filepath.Join(n.LogDir, "__cluster_metadata-0") }

// QuorumStateFile is the node's __cluster_metadata-0/quorum-state.
func (n *KafkaNode) QuorumStateFile() string { return filepath.Join(n.MetadataDir(), "quorum-state") }

// Kill ends node id at once (SIGKILL); its proxy, if any, stops
// listening too.
func (c *KafkaCluster) Kill(id int32) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	err = n.Kill()
	if p := c.Proxies[id]; p != nil {
		p.Pause()
	}
	return err
}

// Stop shuts node id down cleanly (SIGTERM, killed after timeout); its
// proxy, if any, stops listening once it has.
func (c *KafkaCluster) Stop(id int32, timeout time.Duration) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	err = n.Stop(timeout)
	if p := c.Proxies[id]; p != nil {
		p.Pause()
	}
	return err
}

// Start runs node id again, its proxy first.
func (c *KafkaCluster) Start(id int32) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	if p := c.Proxies[id]; p != nil {
		if err := p.Resume(); err != nil {
			return err
		}
	}
	return n.Start()
}

func (c *KafkaCluster) node(id int32) (*KafkaNode, error) {
	if n := c.Nodes[id]; n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("kafka cluster has no node %d", id)
}

// Isolate cuts every link to and from node id. It needs a Proxied
// cluster.
func (c *KafkaCluster) Isolate(id int32) error {
	if len(c.Proxies) == 0 {
		return errors.New("kafka cluster has no proxies to cut links with (start it Proxied)")
	}
	c.rules.SetIsolated(id, true)
	for _, p := range c.Proxies {
		p.Enforce()
	}
	return nil
}

// Heal lets every link through again.
func (c *KafkaCluster) Heal() {
	c.rules.HealAll()
}

// Close kills every node that still runs and closes the link proxies.
func (c *KafkaCluster) Close() {
	for _, n := range c.Nodes {
		n.Kill() // a node that does not run says so; nothing to do
	}
	for _, p := range c.Proxies {
		p.Close()
	}
}

// Node is the node with id, or nil.
func (c *KafkaCluster) Node(id int32) *KafkaNode { return c.Nodes[id] }

// ids are the nodes' ids in order, controllers first.
func (c *KafkaCluster) ids() []int32 {
	ids := slices.Collect(maps.Keys(c.Nodes))
	slices.Sort(ids)
	return ids
}

// BrokerAddrs are the brokers' listeners, 101 first.
func (c *KafkaCluster) BrokerAddrs() []string {
	var out []string
	for _, id := range c.ids() {
		if n := c.Nodes[id]; !n.Controller {
			out = append(out, n.Addr)
		}
	}
	return out
}

// ControllerAddrs maps the controllers' IDs to the addresses they are
// reached at (their proxies', when the cluster has them).
func (c *KafkaCluster) ControllerAddrs() map[int32]string {
	out := map[int32]string{}
	for id, n := range c.Nodes {
		if !n.Controller {
			continue
		}
		out[id] = n.Addr
		if p := c.Proxies[id]; p != nil {
			out[id] = p.Addr
		}
	}
	return out
}

// PIDs are the running nodes' process IDs.
func (c *KafkaCluster) PIDs() []int {
	var out []int
	for _, id := range c.ids() {
		if pid := c.Nodes[id].PID(); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// PID is the node's process ID, 0 when it is not running.
func (n *KafkaNode) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}
