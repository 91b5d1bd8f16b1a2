package cluster

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kraftlab/kraftlab/cluster/server"
)

// metaPropertiesFile is the file Kafka's kafka-storage format writes into
// every log directory: the cluster it belongs to and the node it is.
const metaPropertiesFile = "meta.properties"

// loadClusterID returns the cluster ID the nodes' folders under dir
// already carry in their meta.properties, or a new one, and writes
// meta.properties into every node's folder that lacks it. Folders of
// different clusters, or a folder of another node, are an error: the
// quorum would refuse their requests anyway (INCONSISTENT_CLUSTER_ID).
func loadClusterID(dir string, ids []int32) (string, error) {
	var clusterID, from string
	for _, id := range ids {
		path := filepath.Join(server.NodeDir(dir, id), metaPropertiesFile)
		props, err := readProperties(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if got := props["node.id"]; got != strconv.Itoa(int(id)) {
			return "", fmt.Errorf("%s says node.id=%s, but the folder is node %d's", path, got, id)
		}
		cid := props["cluster.id"]
		if cid == "" {
			return "", fmt.Errorf("%s has no cluster.id", path)
		}
		if clusterID != "" && cid != clusterID {
			return "", fmt.Errorf("the data folder %s mixes clusters: %s has cluster.id=%s, %s has %s", dir, path, cid, from, clusterID)
		}
		clusterID, from = cid, path
	}
	if clusterID == "" {
		clusterID = newClusterID()
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(server.NodeDir(dir, id), metaPropertiesFile)); err == nil {
			continue
		}
		if err := writeMetaProperties(dir, id, clusterID); err != nil {
			return "", err
		}
	}
	return clusterID, nil
}

// writeMetaProperties formats node id's folder under dir for the cluster,
// as kafka-storage format does.
func writeMetaProperties(dir string, id int32, clusterID string) error {
	nodeDir := server.NodeDir(dir, id)
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		return fmt.Errorf("node %d's folder: %w", id, err)
	}
	content := fmt.Sprintf("#kraftlab\nversion=1\ncluster.id=%s\nnode.id=%d\n", clusterID, id)
	if err := os.WriteFile(filepath.Join(nodeDir, metaPropertiesFile), []byte(content), 0o644); err != nil {
		return fmt.Errorf("node %d's folder: %w", id, err)
	}
	return nil
}

// newClusterID returns a random cluster ID in Kafka's format (Uuid's
// toString: 16 random bytes, URL-safe base64 without padding).
func newClusterID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// readProperties reads a Java properties file of key=value lines.
func readProperties(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	props := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want key=value, got %q", path, line, text)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return props, nil
}
