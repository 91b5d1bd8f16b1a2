package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The whole module shares one Kafka (jars fetched once) and one kraftlab
// binary. Tests run one after the other: one JVM at a time.
var (
	kafka      *Kafka
	kafkaErr   error
	kraftlab   string // the built binary
	buildErr   error
	scratchDir string
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	start := time.Now()
	kafka, kafkaErr = Setup(ctx)
	if kafkaErr != nil {
		fmt.Fprintf(os.Stderr, "interop: %v: the tests that run Kafka skip\n", kafkaErr)
	} else {
		fmt.Fprintf(os.Stderr, "interop: Kafka %s jars in %s (%.1fs)\n", KafkaVersion, kafka.JarsDir, time.Since(start).Seconds())
	}
	var err error
	scratchDir, err = os.MkdirTemp("", "kraftlab-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, kcatErr := exec.LookPath("kcat")
	if kafkaErr == nil || kcatErr == nil { // kcat's tests need no Java
		root, _ := filepath.Abs("..")
		kraftlab, buildErr = BuildKraftlab(ctx, root, scratchDir)
	} else {
		buildErr = errors.New("kraftlab not built: neither Kafka nor kcat can run here")
	}
	code := m.Run()
	os.RemoveAll(scratchDir)
	os.Exit(code)
}

// needKafka skips the test when Kafka cannot run here; set
// KRAFTLAB_INTEROP_REQUIRE=1 to fail instead.
func needKafka(t *testing.T) *Kafka {
	t.Helper()
	if kafkaErr != nil {
		if os.Getenv("KRAFTLAB_INTEROP_REQUIRE") != "" {
			t.Fatal(kafkaErr)
		}
		t.Skipf("skipped: %v", kafkaErr)
	}
	return kafka
}

func needKraftlab(t *testing.T) string {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return kraftlab
}

// startPlayground starts a playground for the test and stops it at cleanup.
func startPlayground(t *testing.T, upArgs ...string) *Playground {
	t.Helper()
	bin := needKraftlab(t)
	dir := t.TempDir()
	p, err := StartPlayground(context.Background(), bin, filepath.Join(dir, "home"), filepath.Join(dir, "data"), upArgs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.Ended() {
			p.Down(context.Background())
		}
	})
	if _, err := p.Run(context.Background(), "wait", "caught-up", "--timeout", "20s"); err != nil {
		t.Fatal(err)
	}
	return p
}

// runTool runs a Kafka tool, logging its command line and output.
func runTool(t *testing.T, k *Kafka, main string, args ...string) Result {
	t.Helper()
	r := k.Run(context.Background(), 90*time.Second, main, args...)
	t.Logf("$ java %s  (%.1fs, %v)\n%s%s", strings.Join(r.Args, " "), r.Took.Seconds(), r.Err, indent(r.Stdout), indent(r.Stderr))
	return r
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}
