// Package interop checks kraftlab against Apache Kafka itself: Kafka's own
// command-line tools talk to a kraftlab playground and read its files, and
// kraftlab's storage reads a log that a real Kafka controller wrote.
//
// Nothing of Kafka is committed. Kafka's jars are fetched once with Maven
// (one dependency:copy-dependencies of a generated pom) into a cache folder
// and reused: $KRAFTLAB_INTEROP_CACHE, else $XDG_CACHE_HOME/kraftlab-interop,
// else ~/.cache/kraftlab-interop. Where java or mvn is missing, or the
// download fails, Setup returns an *UnavailableError and the tests skip.
package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KafkaVersion is the Apache Kafka release the harness runs.
const KafkaVersion = "4.4.0"

// KafkaZkVersion is the last Apache Kafka release with ZooKeeper mode, the
// judge of kraftlab's ZooKeeper era; SetupVersion fetches it into its own
// cache folder beside KafkaVersion's.
const KafkaZkVersion = "3.9.1"

// Main classes of Kafka's command-line tools (what bin/kafka-*.sh run).
const (
	MainMetadataQuorum    = "org.apache.kafka.tools.MetadataQuorumCommand"    // kafka-metadata-quorum
	MainDumpLog           = "org.apache.kafka.tools.DumpLogSegments"          // kafka-dump-log
	MainBrokerAPIVersions = "org.apache.kafka.tools.BrokerApiVersionsCommand" // kafka-broker-api-versions
	MainStorage           = "kafka.tools.StorageTool"                         // kafka-storage
	MainKafka             = "kafka.Kafka"                                     // kafka-server-start
	MainTopics            = "org.apache.kafka.tools.TopicCommand"             // kafka-topics
	MainCluster           = "org.apache.kafka.tools.ClusterTool"              // kafka-cluster
	MainConfigs           = "org.apache.kafka.tools.ConfigCommand"            // kafka-configs
	// Kafka 3.9's kafka-configs, still in core: the one that writes
	// SCRAM credentials straight to ZooKeeper (--zookeeper).
	MainConfigs39 = "kafka.admin.ConfigCommand"
)

// EnvCache names the cache folder, overriding the default.
const EnvCache = "KRAFTLAB_INTEROP_CACHE"

// UnavailableError says why Kafka cannot be run here: no java, no mvn, or
// the download failed. Tests skip on it.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return "kafka unavailable: " + e.Reason }

// IsUnavailable reports whether err says Kafka cannot be run here.
func IsUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}

// Kafka runs Kafka's main classes from the cached jars.
type Kafka struct {
	// Version is the Kafka release the jars are.
	Version string
	Java    string
	JarsDir string
	// JVMOptions go before -cp; Setup sets a small heap and fast startup.
	JVMOptions []string
}

// CacheDir returns the cache folder.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "kraftlab-interop"), nil
}

// pom is the generated project whose dependencies are Kafka's server and tools.
const pom = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kraftlab</groupId>
  <artifactId>interop-kafka-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>%[1]s</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>%[1]s</version></dependency>
  </dependencies>
</project>
`

// Setup is SetupVersion of KafkaVersion.
func Setup(ctx context.Context) (*Kafka, error) { return SetupVersion(ctx, KafkaVersion) }

// SetupVersion finds java, fetches Kafka version's jars into the cache
// (folder kafka-<version>) unless they are there already, and returns a
// Kafka ready to run. It fails with an *UnavailableError when Kafka cannot
// be had here.
func SetupVersion(ctx context.Context, version string) (*Kafka, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, &UnavailableError{"no java on PATH"}
	}
	cache, err := CacheDir()
	if err != nil {
		return nil, &UnavailableError{"no cache folder: " + err.Error()}
	}
	jars := filepath.Join(cache, "kafka-"+version, "jars")
	k := &Kafka{Version: version, Java: java, JarsDir: jars, JVMOptions: []string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
	}}
	if _, err := os.Stat(filepath.Join(jars, "kafka-tools-"+version+".jar")); err == nil {
		return k, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, &UnavailableError{"no mvn on PATH to fetch Kafka " + version + "'s jars"}
	}
	work := filepath.Join(cache, "kafka-"+version)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, &UnavailableError{err.Error()}
	}
	if err := os.WriteFile(filepath.Join(work, "pom.xml"), fmt.Appendf(nil, pom, version), 0o644); err != nil {
		return nil, &UnavailableError{err.Error()}
	}
	tmp := jars + ".partial"
	os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-f", filepath.Join(work, "pom.xml"),
		"-Dmaven.repo.local="+filepath.Join(cache, "m2"),
		"dependency:copy-dependencies", "-DoutputDirectory="+tmp)
	cmd.Dir = work
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, &UnavailableError{fmt.Sprintf("mvn dependency:copy-dependencies failed (%v): %s", err, lastLines(out.String(), 5))}
	}
	if err := os.Rename(tmp, jars); err != nil {
		return nil, &UnavailableError{err.Error()}
	}
	return k, nil
}

// Command returns the command that runs main with args in dir.
func (k *Kafka) Command(ctx context.Context, dir, main string, args ...string) *exec.Cmd {
	a := append(append([]string{}, k.JVMOptions...), "-cp", filepath.Join(k.JarsDir, "*"), main)
	cmd := exec.CommandContext(ctx, k.Java, append(a, args...)...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Result is what a tool printed.
type Result struct {
	Args           []string
	Stdout, Stderr string
	Err            error // the exit status, or why it did not run
	Took           time.Duration
}

// Run runs a tool to its end, at most timeout.
func (k *Kafka) Run(ctx context.Context, timeout time.Duration, main string, args ...string) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := k.Command(ctx, os.TempDir(), main, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	return Result{Args: append([]string{main}, args...), Stdout: stdout.String(), Stderr: stripSLF4J(stderr.String()), Err: err, Took: time.Since(start)}
}

// stripSLF4J drops the three lines SLF4J prints without a binding.
func stripSLF4J(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "SLF4J: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
