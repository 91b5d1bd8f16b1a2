package server

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

	"github.com/kraftlab/kraftlab/metadata/record"
)

// MetaPropertiesFile is the file Kafka's kafka-storage format writes into
// every log directory: the cluster it belongs to, the node it is, and the
// directory's own id.
const MetaPropertiesFile = "meta.properties"

// MetaProperties is what a node's folder says of itself (Kafka's
// MetaProperties, version 1).
type MetaProperties struct {
	ClusterID string
	NodeID    int32
	// DirectoryID is the log directory's id (KIP-858): a broker registers
	// with it, and a replaced disk gets a new one.
	DirectoryID record.Uuid
}

// Format writes meta.properties into nodeDir, as kafka-storage format
// does: for the cluster and node, with a fresh directory id.
func Format(nodeDir, clusterID string, nodeID int32) error {
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		return fmt.Errorf("node %d's folder: %w", nodeID, err)
	}
	return writeMeta(nodeDir, MetaProperties{ClusterID: clusterID, NodeID: nodeID, DirectoryID: newDirectoryID()})
}

func writeMeta(nodeDir string, m MetaProperties) error {
	content := fmt.Sprintf("#kraftlab\nversion=1\ncluster.id=%s\nnode.id=%d\ndirectory.id=%s\n", m.ClusterID, m.NodeID, m.DirectoryID)
	if err := os.WriteFile(filepath.Join(nodeDir, MetaPropertiesFile), []byte(content), 0o644); err != nil {
		return fmt.Errorf("node %d's folder: %w", m.NodeID, err)
	}
	return nil
}

// newDirectoryID is a random directory id, never one of the ids Kafka
// reserves (the zero UUID and the few next to it mean unassigned, lost or
// migrating), and, as Kafka's Uuid.randomUuid, never one whose printed
// form has a "-": kafka-metadata-quorum remove-controller
// --controller-directory-id takes one that starts with it for an option.
func newDirectoryID() record.Uuid {
	for {
		var u record.Uuid
		rand.Read(u[:])
		if u[0] != 0 && !strings.Contains(u.String(), "-") {
			return u
		}
	}
}

// ReadMetaProperties reads nodeDir's meta.properties. A missing file wraps
// fs.ErrNotExist; a folder formatted before directory ids has a zero
// DirectoryID.
func ReadMetaProperties(nodeDir string) (MetaProperties, error) {
	path := filepath.Join(nodeDir, MetaPropertiesFile)
	props, err := readProperties(path)
	if err != nil {
		return MetaProperties{}, err
	}
	var m MetaProperties
	id, err := strconv.ParseInt(props["node.id"], 10, 32)
	if err != nil {
		return MetaProperties{}, fmt.Errorf("%s: bad node.id %q", path, props["node.id"])
	}
	m.NodeID = int32(id)
	if m.ClusterID = props["cluster.id"]; m.ClusterID == "" {
		return MetaProperties{}, fmt.Errorf("%s has no cluster.id", path)
	}
	if d, ok := props["directory.id"]; ok {
		b, err := base64.RawURLEncoding.DecodeString(d)
		if err != nil || len(b) != len(m.DirectoryID) {
			return MetaProperties{}, fmt.Errorf("%s: bad directory.id %q", path, d)
		}
		copy(m.DirectoryID[:], b)
	}
	return m, nil
}

// directoryID returns the id of node's folder, giving the folder one if it
// has none yet: formatting it when it has no meta.properties, adding the
// id to one written before directory ids.
func directoryID(nodeDir, clusterID string, nodeID int32) (record.Uuid, error) {
	m, err := ReadMetaProperties(nodeDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := Format(nodeDir, clusterID, nodeID); err != nil {
			return record.Uuid{}, err
		}
		m, err = ReadMetaProperties(nodeDir)
		if err != nil {
			return record.Uuid{}, err
		}
	case err != nil:
		return record.Uuid{}, err
	case m.DirectoryID == record.Uuid{}:
		m.DirectoryID = newDirectoryID()
		if err := writeMeta(nodeDir, m); err != nil {
			return record.Uuid{}, err
		}
	}
	if m.NodeID != nodeID {
		return record.Uuid{}, fmt.Errorf("%s says node.id=%d, but the folder is node %d's", filepath.Join(nodeDir, MetaPropertiesFile), m.NodeID, nodeID)
	}
	return m.DirectoryID, nil
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
