package zookeeper

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func lookPathOK(string) (string, error)   { return "/usr/bin/java", nil }
func lookPathNone(string) (string, error) { return "", errors.New("not found") }

// oneLine fails t unless err is a single line naming hint.
func oneLine(t *testing.T, err error, hint string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), hint) {
		t.Errorf("error %q: want one line naming %q", err, hint)
	}
}

func TestFindWithoutJavaNamesItsInstall(t *testing.T) {
	_, err := find("", lookPathNone, t.TempDir())
	oneLine(t, err, InstallJava)
}

func TestFindWithoutDebianJarsNamesTheInstall(t *testing.T) {
	_, err := find("", lookPathOK, t.TempDir())
	oneLine(t, err, InstallZooKeeper)
}

func TestFindUsesDebianJarsWhenAllArePresent(t *testing.T) {
	dir := t.TempDir()
	for _, name := range debianJars {
		if err := os.WriteFile(filepath.Join(dir, name+".jar"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := find("", lookPathOK, dir)
	if err != nil {
		t.Fatal(err)
	}
	entries := filepath.SplitList(rt.Classpath)
	if len(entries) != len(debianJars) || entries[0] != filepath.Join(dir, "zookeeper.jar") || rt.Java != "/usr/bin/java" {
		t.Errorf("runtime %+v", rt)
	}
}

func TestFindPrefersTheClasspathFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	cp := filepath.Join(dir, "*") + string(os.PathListSeparator) + dir
	rt, err := find(cp, lookPathOK, t.TempDir())
	if err != nil || rt.Classpath != cp {
		t.Errorf("runtime %+v, error %v; want classpath %q", rt, err, cp)
	}
	missing := filepath.Join(dir, "gone", "zookeeper.jar")
	_, err = find(cp+string(os.PathListSeparator)+missing, lookPathOK, t.TempDir())
	oneLine(t, err, InstallZooKeeper)
	if err != nil && !strings.Contains(err.Error(), missing) {
		t.Errorf("error %q does not name %s", err, missing)
	}
}
