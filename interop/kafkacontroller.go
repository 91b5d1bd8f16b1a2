package interop

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Controller is a real Kafka controller in KRaft mode: one voter, static
// quorum (controller.quorum.voters, kraft.version 0), on 127.0.0.1.
type Controller struct {
	Addr, ClusterID, LogDir string
	// MetadataDir is LogDir/__cluster_metadata-0.
	MetadataDir string
	cmd         *exec.Cmd
	out         *os.File
	done        chan error
}

const log4j2 = `status = warn
appender.out.type = File
appender.out.name = FILE
appender.out.fileName = %s
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%%d] %%p %%m (%%c)%%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = FILE
`

// NewClusterID returns a random Kafka cluster ID (a base64 UUID).
func NewClusterID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// StartController formats dir with kafka-storage and starts kafka.Kafka
// with a controller.properties of its own; extra lines go at its end.
func StartController(ctx context.Context, k *Kafka, dir string, extra ...string) (*Controller, error) {
	return startController(ctx, k, dir, nil, "PLAINTEXT", extra...)
}

// StartSCRAMController is StartController with SASL/SCRAM-SHA-256 on the
// CONTROLLER listener, the credentials of user and password written by
// kafka-storage format --add-scram, as a kraftlab node authenticates.
func StartSCRAMController(ctx context.Context, k *Kafka, dir, user, password string, extra ...string) (*Controller, error) {
	return StartSCRAMControllerWithFeatures(ctx, k, dir, user, password, nil, extra...)
}

// StartSCRAMControllerWithFeatures is StartSCRAMController with features
// finalized at the given levels when formatting ("name=level", each a
// kafka-storage format --feature), e.g. "group.version=0" to leave out a
// feature Kafka's bootstrap would otherwise finalize.
func StartSCRAMControllerWithFeatures(ctx context.Context, k *Kafka, dir, user, password string, features []string, extra ...string) (*Controller, error) {
	jaas := fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, user, password)
	extra = append([]string{
		"sasl.enabled.mechanisms=SCRAM-SHA-256",
		"sasl.mechanism.controller.protocol=SCRAM-SHA-256",
		"listener.name.controller.sasl.enabled.mechanisms=SCRAM-SHA-256",
		"listener.name.controller.scram-sha-256.sasl.jaas.config=" + jaas,
	}, extra...)
	scram := fmt.Sprintf("SCRAM-SHA-256=[name=%s,password=%s]", user, password)
	format := []string{"--add-scram", scram}
	for _, f := range features {
		format = append(format, "--feature", f)
	}
	return startController(ctx, k, dir, format, "SASL_PLAINTEXT", extra...)
}

func startController(ctx context.Context, k *Kafka, dir string, formatArgs []string, protocol string, extra ...string) (*Controller, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	c := &Controller{Addr: addr, ClusterID: NewClusterID(), LogDir: filepath.Join(dir, "kafka-logs"), done: make(chan error, 1)}
	c.MetadataDir = filepath.Join(c.LogDir, "__cluster_metadata-0")
	props := strings.Join(append([]string{
		"process.roles=controller",
		"node.id=1",
		"controller.quorum.voters=1@127.0.0.1:" + port,
		"controller.listener.names=CONTROLLER",
		"listeners=CONTROLLER://127.0.0.1:" + port,
		"listener.security.protocol.map=CONTROLLER:" + protocol,
		"log.dirs=" + c.LogDir,
	}, extra...), "\n") + "\n"
	propsFile := filepath.Join(dir, "controller.properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o644); err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, "controller.log")
	logCfg := filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(logCfg, fmt.Appendf(nil, log4j2, logFile), 0o644); err != nil {
		return nil, err
	}
	kk := *k
	kk.JVMOptions = append(append([]string{}, k.JVMOptions...), "-Dlog4j2.configurationFile="+logCfg)
	if r := kk.Run(ctx, 2*time.Minute, MainStorage, append([]string{"format", "--cluster-id=" + c.ClusterID, "--config", propsFile}, formatArgs...)...); r.Err != nil {
		return nil, fmt.Errorf("kafka-storage format: %v: %s%s", r.Err, r.Stdout, r.Stderr)
	}
	c.out, err = os.Create(filepath.Join(dir, "controller.stdout"))
	if err != nil {
		return nil, err
	}
	c.cmd = kk.Command(context.Background(), dir, MainKafka, propsFile)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { c.done <- c.cmd.Wait() }()
	return c, nil
}

// Log is what the controller logged so far, its last n lines.
func (c *Controller) Log(n int) string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(c.LogDir), "controller.log"))
	o, _ := os.ReadFile(c.out.Name())
	return lastLines(string(b)+string(o), n)
}

// Stop ends the controller with SIGTERM (a clean shutdown), or kills it
// after 30 s.
func (c *Controller) Stop() error {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("kafka controller did not stop within 30s of SIGTERM")
	}
	c.out.Close()
	return nil
}
