// Package zookeeper runs a real Apache ZooKeeper server as a child process,
// and ZooKeeper's own command-line client against it, for the playground's
// ZooKeeper-era mode.
package zookeeper

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// InstallZooKeeper is the command that installs ZooKeeper's jars where
// Find looks for them by default.
const InstallZooKeeper = "sudo apt-get install zookeeper"

// InstallJava is the command that installs a Java runtime for ZooKeeper.
const InstallJava = "sudo apt-get install default-jre-headless"

// EnvClasspath names the environment variable that, when set, is the Java
// classpath holding ZooKeeper and its dependencies, instead of Debian's
// jars.
const EnvClasspath = "KRAFTLAB_ZOOKEEPER_CLASSPATH"

// DebianJars is the folder where Debian's zookeeper package and its
// dependencies put their jars.
const DebianJars = "/usr/share/java"

// debianJars are the jars, in DebianJars, that ZooKeeper's server and its
// CLI load. slf4j-simple rather than slf4j-nop, so that the server's own
// log lands in its log file and says why it failed when it does.
var debianJars = []string{
	"zookeeper", "zookeeper-jute", "slf4j-api", "slf4j-simple",
	"netty-handler", "netty-common", "netty-buffer", "netty-transport",
	"netty-codec", "netty-resolver", "netty-transport-native-epoll",
	"netty-transport-native-unix-common", "metrics-core", "commons-cli",
}

// Runtime is what runs ZooKeeper: a java command and the classpath of
// ZooKeeper's jars.
type Runtime struct {
	// Java is the path of the java command.
	Java string
	// Classpath is the Java classpath holding ZooKeeper and its
	// dependencies.
	Classpath string
}

// Find locates java on $PATH and ZooKeeper's jars: those EnvClasspath
// names when it is set, else Debian's in DebianJars. Its error is one line
// that names the command installing what is missing.
func Find() (Runtime, error) {
	return find(os.Getenv(EnvClasspath), exec.LookPath, DebianJars)
}

// find is Find with its environment, $PATH look-up and jar folder given.
func find(classpath string, lookPath func(string) (string, error), jarDir string) (Runtime, error) {
	java, err := lookPath("java")
	if err != nil {
		return Runtime{}, fmt.Errorf("zk mode needs Java: %s", InstallJava)
	}
	if classpath != "" {
		if missing := missingEntry(classpath); missing != "" {
			return Runtime{}, fmt.Errorf("zk mode needs ZooKeeper: %s names %s, which does not exist (unset it to use Debian's: %s)",
				EnvClasspath, missing, InstallZooKeeper)
		}
		return Runtime{Java: java, Classpath: classpath}, nil
	}
	jars := make([]string, len(debianJars))
	for i, name := range debianJars {
		jars[i] = filepath.Join(jarDir, name+".jar")
		if _, err := os.Stat(jars[i]); err != nil {
			return Runtime{}, fmt.Errorf("zk mode needs ZooKeeper: %s", InstallZooKeeper)
		}
	}
	return Runtime{Java: java, Classpath: strings.Join(jars, string(os.PathListSeparator))}, nil
}

// missingEntry returns the first entry of classpath that does not exist,
// or "" when all do; an entry "dir/*" (Java's jar wildcard) needs dir.
func missingEntry(classpath string) string {
	for _, entry := range filepath.SplitList(classpath) {
		if entry == "" {
			continue
		}
		path := entry
		if filepath.Base(entry) == "*" {
			path = filepath.Dir(entry)
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return entry
		}
	}
	return ""
}
