package interop

import (
	"context"
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

// Broker is a real Kafka broker in KRaft mode joining a quorum it did not
// start: kraftlab's controllers, reached with the playground's member
// credentials over SASL/SCRAM-SHA-256 on its CONTROLLER listener.
type Broker struct {
	ID     int32
	Addr   string
	LogDir string
	cmd    *exec.Cmd
	out    *os.File
	done   chan error
	once   sync.Once
}

// BrokerJoin says which quorum a Kafka broker joins and as whom.
type BrokerJoin struct {
	ID        int32
	ClusterID string
	// Voters is controller.quorum.voters, e.g. 1@127.0.0.1:19001.
	Voters string
	// User and Password authenticate the broker to the controllers.
	User, Password string
}

// StartBroker formats dir for cluster j.ClusterID with kafka-storage and
// starts kafka.Kafka as broker j.ID on a free port of 127.0.0.1; extra
// lines go at the end of its broker.properties.
func StartBroker(ctx context.Context, k *Kafka, dir string, j BrokerJoin, extra ...string) (*Broker, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	b := &Broker{ID: j.ID, Addr: addr, LogDir: filepath.Join(dir, "kafka-logs"), done: make(chan error, 1)}
	jaas := fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, j.User, j.Password)
	props := strings.Join(append([]string{
		"process.roles=broker",
		"node.id=" + strconv.Itoa(int(j.ID)),
		"controller.quorum.voters=" + j.Voters,
		"controller.listener.names=CONTROLLER",
		"listeners=PLAINTEXT://" + addr,
		"inter.broker.listener.name=PLAINTEXT",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
		"sasl.mechanism.controller.protocol=SCRAM-SHA-256",
		"listener.name.controller.scram-sha-256.sasl.jaas.config=" + jaas,
		"log.dirs=" + b.LogDir,
	}, extra...), "\n") + "\n"
	propsFile := filepath.Join(dir, "broker.properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o600); err != nil {
		return nil, err
	}
	if r := k.Run(ctx, 2*time.Minute, MainStorage, "format", "--cluster-id="+j.ClusterID, "--config", propsFile); r.Err != nil {
		return nil, fmt.Errorf("kafka-storage format: %v: %s%s", r.Err, r.Stdout, r.Stderr)
	}
	b.out, err = os.Create(filepath.Join(dir, "broker.stdout"))
	if err != nil {
		return nil, err
	}
	b.cmd = k.Command(context.Background(), dir, MainKafka, propsFile)
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { b.done <- b.cmd.Wait() }()
	return b, nil
}

// Output is what the broker's process printed, its last n lines.
func (b *Broker) Output(n int) string {
	o, _ := os.ReadFile(b.out.Name())
	return lastLines(stripSLF4J(string(o)), n)
}

// Kill ends the broker with SIGKILL, as kraftlab's kill does, and waits.
func (b *Broker) Kill() {
	b.once.Do(func() {
		b.cmd.Process.Signal(syscall.SIGKILL)
		<-b.done
		b.out.Close()
	})
}
