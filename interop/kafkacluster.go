package interop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// KafkaServerJVMOptions are the JVM options bin/kafka-server-start.sh
// gives a Kafka node (kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS)
// with the heap set by the caller instead of its 1 GB: the harness's own
// tool options (C1 only, serial GC) would hold a measured broker back.
func KafkaServerJVMOptions(heap string) []string {
	return []string{"-Xmx" + heap, "-Xms" + heap, "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
		"-Djava.awt.headless=true"}
}

// KafkaClusterConfig is the shape of a KafkaCluster: controllers 1..N
// (the static voter set, controller.quorum.voters) and brokers
// 101..100+M, each its own JVM with process.roles of one role only, as
// kraftlab's playground separates them.
type KafkaClusterConfig struct {
	Controllers, Brokers int
	// Heap is each JVM's -Xmx and -Xms, e.g. "512m".
	Heap string
	// Extra lines go at the end of every node's properties.
	Extra []string
}

// KafkaNode is one JVM of a KafkaCluster.
type KafkaNode struct {
	ID   int32
	Addr string
	Dir  string
	// Props is the node's properties file.
	Props string

	k    *Kafka
	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *os.File
	done chan error
}

// KafkaCluster is an Apache Kafka cluster in KRaft mode on 127.0.0.1, all
// PLAINTEXT.
type KafkaCluster struct {
	ClusterID   string
	Controllers []*KafkaNode
	Brokers     []*KafkaNode
}

// freeAddr reserves a loopback port and frees it for the node to bind.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// StartKafkaCluster formats every node's folder under dir with
// kafka-storage (in parallel) and starts them all. It returns once the
// processes run; WaitReady waits for the brokers to be unfenced.
func StartKafkaCluster(ctx context.Context, k *Kafka, dir string, cfg KafkaClusterConfig) (*KafkaCluster, error) {
	if cfg.Controllers < 1 || cfg.Brokers < 1 {
		return nil, fmt.Errorf("kafka cluster: %d controllers and %d brokers: want at least one of each", cfg.Controllers, cfg.Brokers)
	}
	kk := *k
	kk.JVMOptions = KafkaServerJVMOptions(cfg.Heap)
	c := &KafkaCluster{ClusterID: NewClusterID()}
	var voters []string
	for i := range cfg.Controllers {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		n := &KafkaNode{ID: int32(1 + i), Addr: addr, k: &kk}
		c.Controllers = append(c.Controllers, n)
		voters = append(voters, fmt.Sprintf("%d@%s", n.ID, addr))
	}
	for i := range cfg.Brokers {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		c.Brokers = append(c.Brokers, &KafkaNode{ID: int32(101 + i), Addr: addr, k: &kk})
	}
	common := []string{
		"controller.quorum.voters=" + strings.Join(voters, ","),
		"controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
	}
	nodes := c.nodes()
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		n.Dir = filepath.Join(dir, fmt.Sprintf("node-%d", n.ID))
		var own []string
		if n.ID < 100 {
			own = []string{"process.roles=controller", "listeners=CONTROLLER://" + n.Addr}
		} else {
			own = []string{"process.roles=broker", "listeners=PLAINTEXT://" + n.Addr, "inter.broker.listener.name=PLAINTEXT"}
		}
		props := append(append(append([]string{"node.id=" + strconv.Itoa(int(n.ID))}, own...), common...),
			"log.dirs="+filepath.Join(n.Dir, "kafka-logs"))
		props = append(props, cfg.Extra...)
		wg.Go(func() { errs[i] = n.format(ctx, c.ClusterID, props) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if err := n.Start(); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

func (c *KafkaCluster) nodes() []*KafkaNode {
	return append(append([]*KafkaNode{}, c.Controllers...), c.Brokers...)
}

// Node is the node with id, or nil.
func (c *KafkaCluster) Node(id int32) *KafkaNode {
	for _, n := range c.nodes() {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// BrokerAddrs are the brokers' listeners, 101 first.
func (c *KafkaCluster) BrokerAddrs() []string {
	var out []string
	for _, n := range c.Brokers {
		out = append(out, n.Addr)
	}
	return out
}

// ControllerAddrs maps the controllers' IDs to their listeners.
func (c *KafkaCluster) ControllerAddrs() map[int32]string {
	out := map[int32]string{}
	for _, n := range c.Controllers {
		out[n.ID] = n.Addr
	}
	return out
}

// PIDs are the running nodes' process IDs.
func (c *KafkaCluster) PIDs() []int {
	var out []int
	for _, n := range c.nodes() {
		if pid := n.PID(); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// Stop kills every node and waits for them.
func (c *KafkaCluster) Stop() {
	for _, n := range c.nodes() {
		n.Kill()
	}
}

func (n *KafkaNode) format(ctx context.Context, clusterID string, props []string) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return err
	}
	n.Props = filepath.Join(n.Dir, "server.properties")
	if err := os.WriteFile(n.Props, []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	logCfg := filepath.Join(n.Dir, "log4j2.properties")
	if err := os.WriteFile(logCfg, fmt.Appendf(nil, log4j2, filepath.Join(n.Dir, "server.log")), 0o644); err != nil {
		return err
	}
	// The tool needs no server heap; it runs with the harness's options.
	tool := Kafka{Java: n.k.Java, JarsDir: n.k.JarsDir, JVMOptions: []string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.configurationFile=" + logCfg}}
	if r := tool.Run(ctx, 2*time.Minute, MainStorage, "format", "--cluster-id="+clusterID, "--config", n.Props); r.Err != nil {
		return fmt.Errorf("kafka-storage format node %d: %v: %s%s", n.ID, r.Err, r.Stdout, r.Stderr)
	}
	return nil
}

// Start starts the node's JVM from its formatted folder (again after a
// Kill: its logs stay).
func (n *KafkaNode) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return fmt.Errorf("kafka node %d runs already", n.ID)
	}
	out, err := os.OpenFile(filepath.Join(n.Dir, "stdout"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	kk := *n.k
	kk.JVMOptions = append(append([]string{}, n.k.JVMOptions...), "-Dlog4j2.configurationFile="+filepath.Join(n.Dir, "log4j2.properties"))
	cmd := kk.Command(context.Background(), n.Dir, MainKafka, n.Props)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start kafka node %d: %w", n.ID, err)
	}
	n.cmd, n.out, n.done = cmd, out, make(chan error, 1)
	go func(done chan error) { done <- cmd.Wait() }(n.done)
	return nil
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

// Kill ends the node with SIGKILL, as kraftlab's kill does, and waits for
// it; a node not running is left alone.
func (n *KafkaNode) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
	n.out.Close()
	n.cmd = nil
}

// Log is the last n lines of the node's server log and output.
func (n *KafkaNode) Log(lines int) string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "server.log"))
	o, _ := os.ReadFile(filepath.Join(n.Dir, "stdout"))
	return lastLines(string(b)+stripSLF4J(string(o)), lines)
}
