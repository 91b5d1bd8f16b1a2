package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ZkJoin says which ZooKeeper-era cluster a Kafka 3.9 broker joins and as
// whom.
type ZkJoin struct {
	ID int32
	// ZooKeeper is zookeeper.connect, host:port.
	ZooKeeper string
	// User and Password are the credential of the broker's inter-broker
	// listener, which it both presents and checks.
	User, Password string
}

// ZkBroker is a real Kafka 3.9 broker in ZooKeeper mode. Its one
// listener is named PLAINTEXT, as kraftlab's nodes name the endpoint they
// reach each other at, and is SASL_PLAINTEXT with SCRAM-SHA-256, as they
// authenticate there as members; so clients too authenticate there.
type ZkBroker struct {
	ID int32
	// Addr is the listener.
	Addr   string
	LogDir string
	// LogFile is Kafka's log, its warnings and errors.
	LogFile string
	cmd     *exec.Cmd
	out     *os.File
	done    chan error
	once    sync.Once
}

// StartZkBroker starts kafka.Kafka of k (Kafka 3.9) as broker j.ID in
// ZooKeeper mode on a free port of 127.0.0.1; extra lines go at the end
// of its server.properties.
func StartZkBroker(ctx context.Context, k *Kafka, dir string, j ZkJoin, extra ...string) (*ZkBroker, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	b := &ZkBroker{ID: j.ID, Addr: addr, LogDir: filepath.Join(dir, "kafka-logs"), LogFile: filepath.Join(dir, "server.log"), done: make(chan error, 1)}
	jaas := fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, j.User, j.Password)
	props := strings.Join(append([]string{
		"broker.id=" + strconv.Itoa(int(j.ID)),
		"zookeeper.connect=" + j.ZooKeeper,
		"inter.broker.protocol.version=3.9",
		"listeners=PLAINTEXT://" + addr,
		"listener.security.protocol.map=PLAINTEXT:SASL_PLAINTEXT",
		"inter.broker.listener.name=PLAINTEXT",
		"sasl.enabled.mechanisms=SCRAM-SHA-256",
		"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256",
		"listener.name.plaintext.scram-sha-256.sasl.jaas.config=" + jaas,
		"log.dirs=" + b.LogDir,
		"offsets.topic.replication.factor=1",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"group.initial.rebalance.delay.ms=0",
	}, extra...), "\n") + "\n"
	propsFile := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o600); err != nil {
		return nil, err
	}
	// Kafka's own log, WARN and above, in its folder: what it refused
	// and why.
	log4j := filepath.Join(dir, "log4j.properties")
	if err := os.WriteFile(log4j, []byte("log4j.rootLogger=WARN, file\n"+
		"log4j.appender.file=org.apache.log4j.FileAppender\n"+
		"log4j.appender.file.File="+filepath.Join(dir, "server.log")+"\n"+
		"log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"+
		"log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n\n"), 0o600); err != nil {
		return nil, err
	}
	if b.out, err = os.Create(filepath.Join(dir, "broker.stdout")); err != nil {
		return nil, err
	}
	kl := *k
	kl.JVMOptions = append(slices.Clone(k.JVMOptions), "-Dlog4j.configuration=file:"+log4j)
	b.cmd = kl.Command(context.Background(), dir, MainKafka, propsFile)
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		b.out.Close()
		return nil, err
	}
	go func() { b.done <- b.cmd.Wait() }()
	return b, nil
}

// Output is what the broker's process printed and logged, the last n
// lines of each.
func (b *ZkBroker) Output(n int) string {
	o, _ := os.ReadFile(b.out.Name())
	l, _ := os.ReadFile(b.LogFile)
	return lastLines(stripSLF4J(string(o)), n) + "\n" + strings.ReplaceAll(lastLines(string(l), n), " | ", "\n")
}

// Complaints are the distinct warnings and errors in Kafka's log, without
// their times, in the order they first came, at most n.
func (b *ZkBroker) Complaints(n int) []string {
	l, _ := os.ReadFile(b.LogFile)
	var out []string
	for _, line := range strings.Split(string(l), "\n") {
		_, msg, ok := strings.Cut(line, "] ")
		if !ok || !strings.HasPrefix(line, "[") || (!strings.HasPrefix(msg, "WARN ") && !strings.HasPrefix(msg, "ERROR ")) {
			continue
		}
		if !slices.Contains(out, msg) {
			out = append(out, msg)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// Exited reports whether the broker's process has ended.
func (b *ZkBroker) Exited() bool {
	select {
	case err := <-b.done:
		b.done <- err
		return true
	default:
		return false
	}
}

// Kill ends the broker with SIGKILL and waits.
func (b *ZkBroker) Kill() {
	b.once.Do(func() {
		b.cmd.Process.Signal(syscall.SIGKILL)
		<-b.done
		b.out.Close()
	})
}
