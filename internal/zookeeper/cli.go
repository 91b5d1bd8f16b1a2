package zookeeper

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// chatter matches the lines ZooKeeper's CLI prints about its own
// connection, which are not an answer to the command.
var chatter = regexp.MustCompile(`^(Connecting to \S+|WATCHER::|WatchedEvent state:\S+ type:None path:\S+.*)$`)

// CLI runs ZooKeeper's own command-line client, ZooKeeperMain, against
// addr with one command (args such as "get", "/brokers/ids/1") and returns
// what it printed, standard output and error together, without the lines
// about its connection. A command that fails (a missing znode) returns
// its output and an error that quotes it.
func (rt Runtime) CLI(ctx context.Context, addr string, args ...string) (string, error) {
	cmdArgs := append([]string{
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
		"-Djava.net.preferIPv4Stack=true",
		// The client's own log would mix with the answer.
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=off",
		"-cp", rt.Classpath,
		"org.apache.zookeeper.ZooKeeperMain", "-server", addr,
	}, args...)
	cmd := exec.CommandContext(ctx, rt.Java, cmdArgs...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	answer := withoutChatter(out.String())
	if err != nil {
		return answer, fmt.Errorf("zookeeper CLI %s: %w: %s", strings.Join(args, " "), err, answer)
	}
	return answer, nil
}

// withoutChatter drops the connection lines from the CLI's output, and
// the blank lines before its first line of answer.
func withoutChatter(out string) string {
	var kept []string
	for _, line := range strings.Split(out, "\n") {
		if chatter.MatchString(line) || (len(kept) == 0 && strings.TrimSpace(line) == "") {
			continue
		}
		kept = append(kept, line)
	}
	return strings.TrimRight(strings.Join(kept, "\n"), "\n")
}
